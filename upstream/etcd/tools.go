//go:build tools

// Package etcd pins the etcd server the upstream control plane fixture runs. It is
// a module of its own so etcd's dependencies never move Kubernetes'.
package etcd

import _ "go.etcd.io/etcd/server/v3"
