// Where a group's protobuf messages live: k8s.io/api/<first label of the group>/<version>, `core` for the core group
// (rbac.authorization.k8s.io → rbac, admissionregistration.k8s.io → admissionregistration).
export const protoPackageOf = (group: string): string => (group === '' ? 'core' : group.split('.')[0]!);
