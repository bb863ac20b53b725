# The official Python client's DynamicClient on a custom resource: discovery
# finds the kind, create, a watch that sees a change, list by field selector.
# Prints one line per check; the e2e test asserts on them.
import sys
import threading
import time

from kubernetes import config, dynamic, watch
from kubernetes.client import api_client

client = dynamic.DynamicClient(api_client.ApiClient(configuration=config.load_kube_config(sys.argv[1])))
tabs = client.resources.get(api_version="stable.example.com/v1", kind="CronTab")
print("resource:", tabs.name, tabs.namespaced, sorted(tabs.short_names or []))
made = tabs.create(body={"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "py-tab"}, "spec": {"cronSpec": "*/5 * * * *", "color": "green"}}, namespace="default")
print("created:", made.metadata.name, made.spec.image, made.spec.replicas)

def later():
    time.sleep(1)
    tabs.patch(name="py-tab", namespace="default", body={"spec": {"replicas": 7}}, content_type="application/merge-patch+json")

threading.Thread(target=later).start()
seen = []
for e in client.watch(tabs, namespace="default", resource_version=made.metadata.resourceVersion, timeout=10):
    seen.append(e["type"] + ":" + e["object"].metadata.name + ":" + str(e["object"].spec.replicas))
    if e["type"] == "MODIFIED":
        break
print("watch:", " ".join(seen))
green = tabs.get(namespace="default", field_selector="spec.color=green")
print("green:", [i.metadata.name for i in green.items])
