// Where a group's protobuf messages live: k8s.io/api/<first label of the group>/<version> (`core` for the core group:
// rbac.authorization.k8s.io → rbac, admissionregistration.k8s.io → admissionregistration), and apiextensions.k8s.io's
// in its own module.
const APIEXTENSIONS = 'apiextensions.k8s.io';

/** The protobuf package of a group version (k8s.io.api.apps.v1). */
export function protoPackage(group: string, version: string): string {
  if (group === APIEXTENSIONS) return `k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.${version}`;
  return `k8s.io.api.${group === '' ? 'core' : group.split('.')[0]!}.${version}`;
}

/** The generated.proto of a group version, relative to the directory holding the k8s.io modules. */
export function protoFile(group: string, version: string): string {
  if (group === APIEXTENSIONS)
    return `k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/${version}/generated.proto`;
  return `k8s.io/api/${group === '' ? 'core' : group.split('.')[0]!}/${version}/generated.proto`;
}
