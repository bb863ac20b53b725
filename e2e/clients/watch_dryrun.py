# The official Python client (Debian python3-kubernetes) against tskube apiserver:
# watches with watch=True and a resource_version, and server-side dry run.
# Prints one line per check; the e2e test asserts on them.
import sys
import threading
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

config.load_kube_config(sys.argv[1])
v1 = client.CoreV1Api()

# A watch from the list's resourceVersion sees a ConfigMap created after it started.
rv = v1.list_namespaced_config_map("default").metadata.resource_version
def create_later():
    time.sleep(1)
    v1.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-watched")))
threading.Thread(target=create_later).start()
seen = []
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=10):
    seen.append((ev["type"], ev["object"].metadata.name))
    if ev["object"].metadata.name == "py-watched":
        w.stop()
print("watch:", " ".join(f"{t}:{n}" for t, n in seen))

# A watch of a quiet collection returns when its timeout ends, with nothing.
t0 = time.time()
quiet = list(watch.Watch().stream(v1.list_namespaced_secret, "kube-public", timeout_seconds=2))
print("quiet:", len(quiet), "events in", round(time.time() - t0), "s")

# Dry run: the answer looks created, nothing is.
made = v1.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-dry"), data={"a": "1"}), dry_run="All")
try:
    v1.read_namespaced_config_map("py-dry", "default")
    print("dry-create: stored")
except ApiException as e:
    print("dry-create:", made.metadata.name, "answered, read is", e.status)
v1.delete_namespaced_config_map("py-watched", "default", dry_run="All")
print("dry-delete: still there:", v1.read_namespaced_config_map("py-watched", "default").metadata.name)

# Paging: pages after the first are as of the first page's resourceVersion, whatever changes in between.
for i in range(5):
    v1.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"pg-{i}", labels={"paged": "yes"})))
first = v1.list_namespaced_config_map("default", label_selector="paged=yes", limit=2)
names = [c.metadata.name for c in first.items]
v1.delete_namespaced_config_map("pg-3", "default")
v1.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="pg-9", labels={"paged": "yes"})))
token, rvs, remaining = first.metadata._continue, {first.metadata.resource_version}, [first.metadata.remaining_item_count]
while token:
    page = v1.list_namespaced_config_map("default", label_selector="paged=yes", limit=2, _continue=token)
    names += [c.metadata.name for c in page.items]
    rvs.add(page.metadata.resource_version)
    remaining.append(page.metadata.remaining_item_count)
    token = page.metadata._continue
print("paged:", " ".join(names), "at", len(rvs), "resourceVersion(s); remaining counts:", remaining)
