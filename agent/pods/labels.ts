// CRI labels and annotations, as upstream kubelet writes them
// (pkg/kubelet/types/labels.go, kuberuntime/labels.go). They are how a
// restarted kubelet recognises its pods and restart counts.
export const L_POD_NAME = 'io.kubernetes.pod.name';
export const L_POD_NAMESPACE = 'io.kubernetes.pod.namespace';
export const L_POD_UID = 'io.kubernetes.pod.uid';
export const L_CONTAINER_NAME = 'io.kubernetes.container.name';
export const L_CONTAINER_TYPE = 'io.kubernetes.container.type';
export const POD_INFRA_CONTAINER_NAME = 'POD';

export const A_CONTAINER_HASH = 'io.kubernetes.container.hash';
export const A_CONTAINER_HASH_WITHOUT_RESOURCES = 'io.kubernetes.container.hashWithoutResources';
export const A_RESTART_COUNT = 'io.kubernetes.container.restartCount';
/** tskube's own: the RestartAllContainers trigger (its container ID) a container was started after (restart-all.ts). */
export const A_RESTART_ALL_AFTER = 'io.tskube.container.restartAllAfter';
/** The memory request (bytes) a container was created with: the runtime has no cgroup value that shows it. */
export const A_MEMORY_REQUEST = 'io.tskube.container.memoryRequest';
export const A_TERMINATION_MESSAGE_PATH = 'io.kubernetes.container.terminationMessagePath';
export const A_TERMINATION_MESSAGE_POLICY = 'io.kubernetes.container.terminationMessagePolicy';
export const A_PORTS = 'io.kubernetes.container.ports';
export const A_POD_DELETION_GRACE = 'io.kubernetes.pod.deletionGracePeriod';
export const A_POD_TERMINATION_GRACE = 'io.kubernetes.pod.terminationGracePeriod';
