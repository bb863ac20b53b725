// The subset of the Kubernetes protobuf schema (k8s.io/api generated.proto
// field numbers) that typed clients send for the kinds decoded here:
// `kubectl create namespace|configmap|secret|serviceaccount|deployment|service|
// role|clusterrole|rolebinding|clusterrolebinding`, `kubectl create token` and
// `kubectl auth can-i`. Messages are listed with every field Go's
// marshaller writes for them, so a body with a field not known here is
// detected (see protobuf.ts) instead of losing data.
export const K8S_PROTO = `
syntax = "proto2";
package k8s;
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message IntOrString { optional int64 type = 1; optional int32 intVal = 2; optional string strVal = 3; }
message Quantity { optional string string = 1; }
message FieldsV1 { optional bytes Raw = 1; }
message ManagedFieldsEntry { optional string manager = 1; optional string operation = 2; optional string apiVersion = 3; optional Time time = 4; optional string fieldsType = 6; optional FieldsV1 fieldsV1 = 7; optional string subresource = 8; }
message OwnerReference { optional string kind = 1; optional string name = 3; optional string uid = 4; optional string apiVersion = 5; optional bool controller = 6; optional bool blockOwnerDeletion = 7; }
message ObjectMeta {
  optional string name = 1; optional string generateName = 2; optional string namespace = 3; optional string selfLink = 4;
  optional string uid = 5; optional string resourceVersion = 6; optional int64 generation = 7; optional Time creationTimestamp = 8;
  optional Time deletionTimestamp = 9; optional int64 deletionGracePeriodSeconds = 10;
  map<string, string> labels = 11; map<string, string> annotations = 12;
  repeated OwnerReference ownerReferences = 13; repeated string finalizers = 14; repeated ManagedFieldsEntry managedFields = 17;
}
message LabelSelectorRequirement { optional string key = 1; optional string operator = 2; repeated string values = 3; }
message LabelSelector { map<string, string> matchLabels = 1; repeated LabelSelectorRequirement matchExpressions = 2; }
message Condition { optional string type = 1; optional string status = 2; optional int64 observedGeneration = 3; optional Time lastTransitionTime = 4; optional string reason = 5; optional string message = 6; }

message NamespaceSpec { repeated string finalizers = 1; }
message NamespaceCondition { optional string type = 1; optional string status = 2; optional Time lastTransitionTime = 4; optional string reason = 5; optional string message = 6; }
message NamespaceStatus { optional string phase = 1; repeated NamespaceCondition conditions = 2; }
message Namespace { optional ObjectMeta metadata = 1; optional NamespaceSpec spec = 2; optional NamespaceStatus status = 3; }
message ConfigMap { optional ObjectMeta metadata = 1; map<string, string> data = 2; map<string, bytes> binaryData = 3; optional bool immutable = 4; }
message Secret { optional ObjectMeta metadata = 1; map<string, bytes> data = 2; optional string type = 3; map<string, string> stringData = 4; optional bool immutable = 5; }
message ObjectReference { optional string kind = 1; optional string namespace = 2; optional string name = 3; optional string uid = 4; optional string apiVersion = 5; optional string resourceVersion = 6; optional string fieldPath = 7; }
message LocalObjectReference { optional string name = 1; }
message ServiceAccount { optional ObjectMeta metadata = 1; repeated ObjectReference secrets = 2; repeated LocalObjectReference imagePullSecrets = 3; optional bool automountServiceAccountToken = 4; }

message ContainerPort { optional string name = 1; optional int32 hostPort = 2; optional int32 containerPort = 3; optional string protocol = 4; optional string hostIP = 5; }
message ConfigMapKeySelector { optional LocalObjectReference localObjectReference = 1; optional string key = 2; optional bool optional = 3; }
message SecretKeySelector { optional LocalObjectReference localObjectReference = 1; optional string key = 2; optional bool optional = 3; }
message ObjectFieldSelector { optional string apiVersion = 1; optional string fieldPath = 2; }
message ResourceFieldSelector { optional string containerName = 1; optional string resource = 2; optional Quantity divisor = 3; }
message EnvVarSource { optional ObjectFieldSelector fieldRef = 1; optional ResourceFieldSelector resourceFieldRef = 2; optional ConfigMapKeySelector configMapKeyRef = 3; optional SecretKeySelector secretKeyRef = 4; }
message EnvVar { optional string name = 1; optional string value = 2; optional EnvVarSource valueFrom = 3; }
message ResourceClaim { optional string name = 1; optional string request = 2; }
message ResourceRequirements { map<string, Quantity> limits = 1; map<string, Quantity> requests = 2; repeated ResourceClaim claims = 3; }
message VolumeMount { optional string name = 1; optional bool readOnly = 2; optional string mountPath = 3; optional string subPath = 4; optional string mountPropagation = 5; optional string subPathExpr = 6; optional string recursiveReadOnly = 7; }
message Container {
  optional string name = 1; optional string image = 2; repeated string command = 3; repeated string args = 4; optional string workingDir = 5;
  repeated ContainerPort ports = 6; repeated EnvVar env = 7; optional ResourceRequirements resources = 8; repeated VolumeMount volumeMounts = 9;
  optional string terminationMessagePath = 13; optional string imagePullPolicy = 14;
  optional bool stdin = 16; optional bool stdinOnce = 17; optional bool tty = 18; optional string terminationMessagePolicy = 20;
}
message PodSpec {
  repeated Container containers = 2; optional string restartPolicy = 3; optional int64 terminationGracePeriodSeconds = 4; optional int64 activeDeadlineSeconds = 5;
  optional string dnsPolicy = 6; map<string, string> nodeSelector = 7; optional string serviceAccountName = 8; optional string serviceAccount = 9;
  optional string nodeName = 10; optional bool hostNetwork = 11; optional bool hostPID = 12; optional bool hostIPC = 13;
  optional string hostname = 16; optional string subdomain = 17; optional string schedulerName = 19; repeated Container initContainers = 20;
  optional bool automountServiceAccountToken = 21; optional string priorityClassName = 24; optional bool enableServiceLinks = 30;
}
message PodTemplateSpec { optional ObjectMeta metadata = 1; optional PodSpec spec = 2; }

message RollingUpdateDeployment { optional IntOrString maxUnavailable = 1; optional IntOrString maxSurge = 2; }
message DeploymentStrategy { optional string type = 1; optional RollingUpdateDeployment rollingUpdate = 2; }
message DeploymentSpec {
  optional int32 replicas = 1; optional LabelSelector selector = 2; optional PodTemplateSpec template = 3; optional DeploymentStrategy strategy = 4;
  optional int32 minReadySeconds = 5; optional int32 revisionHistoryLimit = 6; optional bool paused = 7; optional int32 progressDeadlineSeconds = 9;
}
message DeploymentCondition { optional string type = 1; optional string status = 2; optional string reason = 4; optional string message = 5; optional Time lastUpdateTime = 6; optional Time lastTransitionTime = 7; }
message DeploymentStatus {
  optional int64 observedGeneration = 1; optional int32 replicas = 2; optional int32 updatedReplicas = 3; optional int32 availableReplicas = 4;
  optional int32 unavailableReplicas = 5; repeated DeploymentCondition conditions = 6; optional int32 readyReplicas = 7; optional int32 collisionCount = 8; optional int32 terminatingReplicas = 9;
}
message Deployment { optional ObjectMeta metadata = 1; optional DeploymentSpec spec = 2; optional DeploymentStatus status = 3; }

message ServicePort { optional string name = 1; optional string protocol = 2; optional int32 port = 3; optional IntOrString targetPort = 4; optional int32 nodePort = 5; optional string appProtocol = 6; }
message ClientIPConfig { optional int32 timeoutSeconds = 1; }
message SessionAffinityConfig { optional ClientIPConfig clientIP = 1; }
message ServiceSpec {
  repeated ServicePort ports = 1; map<string, string> selector = 2; optional string clusterIP = 3; optional string type = 4; repeated string externalIPs = 5;
  optional string sessionAffinity = 7; optional string loadBalancerIP = 8; repeated string loadBalancerSourceRanges = 9; optional string externalName = 10;
  optional string externalTrafficPolicy = 11; optional int32 healthCheckNodePort = 12; optional bool publishNotReadyAddresses = 13;
  optional SessionAffinityConfig sessionAffinityConfig = 14; optional string ipFamilyPolicy = 17; repeated string clusterIPs = 18; repeated string ipFamilies = 19;
  optional bool allocateLoadBalancerNodePorts = 20; optional string loadBalancerClass = 21; optional string internalTrafficPolicy = 22; optional string trafficDistribution = 23;
}
message PortStatus { optional int32 port = 1; optional string protocol = 2; optional string error = 3; }
message LoadBalancerIngress { optional string ip = 1; optional string hostname = 2; repeated PortStatus ports = 4; optional string ipMode = 5; }
message LoadBalancerStatus { repeated LoadBalancerIngress ingress = 1; }
message ServiceStatus { optional LoadBalancerStatus loadBalancer = 1; repeated Condition conditions = 2; }
message Service { optional ObjectMeta metadata = 1; optional ServiceSpec spec = 2; optional ServiceStatus status = 3; }

message BoundObjectReference { optional string kind = 1; optional string apiVersion = 2; optional string name = 3; optional string uid = 4; }
message TokenRequestSpec { repeated string audiences = 1; optional int64 expirationSeconds = 4; optional BoundObjectReference boundObjectRef = 3; }
message TokenRequestStatus { optional string token = 1; optional Time expirationTimestamp = 2; }
message TokenRequest { optional ObjectMeta metadata = 1; optional TokenRequestSpec spec = 2; optional TokenRequestStatus status = 3; }

message PolicyRule { repeated string verbs = 1; repeated string apiGroups = 2; repeated string resources = 3; repeated string resourceNames = 4; repeated string nonResourceURLs = 5; }
message AggregationRule { repeated LabelSelector clusterRoleSelectors = 1; }
message Role { optional ObjectMeta metadata = 1; repeated PolicyRule rules = 2; }
message ClusterRole { optional ObjectMeta metadata = 1; repeated PolicyRule rules = 2; optional AggregationRule aggregationRule = 3; }
message Subject { optional string kind = 1; optional string apiGroup = 2; optional string name = 3; optional string namespace = 4; }
message RoleRef { optional string apiGroup = 1; optional string kind = 2; optional string name = 3; }
message RoleBinding { optional ObjectMeta metadata = 1; repeated Subject subjects = 2; optional RoleRef roleRef = 3; }
message ClusterRoleBinding { optional ObjectMeta metadata = 1; repeated Subject subjects = 2; optional RoleRef roleRef = 3; }

message ResourceAttributes { optional string namespace = 1; optional string verb = 2; optional string group = 3; optional string version = 4; optional string resource = 5; optional string subresource = 6; optional string name = 7; }
message NonResourceAttributes { optional string path = 1; optional string verb = 2; }
message SelfSubjectAccessReviewSpec { optional ResourceAttributes resourceAttributes = 1; optional NonResourceAttributes nonResourceAttributes = 2; }
message SubjectAccessReviewStatus { optional bool allowed = 1; optional string reason = 2; optional string evaluationError = 3; optional bool denied = 4; }
message SelfSubjectAccessReview { optional ObjectMeta metadata = 1; optional SelfSubjectAccessReviewSpec spec = 2; optional SubjectAccessReviewStatus status = 3; }
message SelfSubjectRulesReviewSpec { optional string namespace = 1; }
message ResourceRule { repeated string verbs = 1; repeated string apiGroups = 2; repeated string resources = 3; repeated string resourceNames = 4; }
message NonResourceRule { repeated string verbs = 1; repeated string nonResourceURLs = 2; }
message SubjectRulesReviewStatus { repeated ResourceRule resourceRules = 1; repeated NonResourceRule nonResourceRules = 2; optional bool incomplete = 3; optional string evaluationError = 4; }
message SelfSubjectRulesReview { optional ObjectMeta metadata = 1; optional SelfSubjectRulesReviewSpec spec = 2; optional SubjectRulesReviewStatus status = 3; }
message ExtraValue { repeated string items = 1; }
message UserInfo { optional string username = 1; optional string uid = 2; repeated string groups = 3; map<string, ExtraValue> extra = 4; }
message SelfSubjectReviewStatus { optional UserInfo userInfo = 1; }
message SelfSubjectReview { optional ObjectMeta metadata = 1; optional SelfSubjectReviewStatus status = 2; }
`;

/** apiVersion/kind -> message; map value types that are bytes (base64 in JSON). */
export const PROTO_KINDS: Record<string, string> = {
  'v1/Namespace': 'Namespace',
  'v1/ConfigMap': 'ConfigMap',
  'v1/Secret': 'Secret',
  'v1/ServiceAccount': 'ServiceAccount',
  'v1/Service': 'Service',
  'apps/v1/Deployment': 'Deployment',
  'authentication.k8s.io/v1/TokenRequest': 'TokenRequest',
  'rbac.authorization.k8s.io/v1/Role': 'Role',
  'rbac.authorization.k8s.io/v1/ClusterRole': 'ClusterRole',
  'rbac.authorization.k8s.io/v1/RoleBinding': 'RoleBinding',
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': 'ClusterRoleBinding',
  'authorization.k8s.io/v1/SelfSubjectAccessReview': 'SelfSubjectAccessReview',
  'authorization.k8s.io/v1/SelfSubjectRulesReview': 'SelfSubjectRulesReview',
  'authentication.k8s.io/v1/SelfSubjectReview': 'SelfSubjectReview',
};
