// The DNS benchmark's upstream anchor: CoreDNS with its default plugins
// (kubernetes and forward among them), as kubeadm deploys it.
package coredns

import _ "github.com/coredns/coredns"
