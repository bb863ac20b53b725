# The official Python client's DynamicClient against tskube apiserver:
# discovery, server-side apply (create, conflict, force) and a dry-run apply.
# Prints one line per check; the e2e test asserts on them.
import json
import sys

from kubernetes import config, dynamic
from kubernetes.client import api_client
from kubernetes.dynamic.exceptions import ConflictError

client = dynamic.DynamicClient(api_client.ApiClient(configuration=config.load_kube_config(sys.argv[1])))
deployments = client.resources.get(api_version="apps/v1", kind="Deployment")

# This client version sends apply bodies only already serialized (JSON is YAML).
def deploy(replicas, image="busybox"):
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "py-ssa", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "py-ssa"}},
            "template": {"metadata": {"labels": {"app": "py-ssa"}}, "spec": {"containers": [{"name": "c", "image": image}]}},
        },
    })

made = client.server_side_apply(deployments, body=deploy(1), name="py-ssa", namespace="default", field_manager="py-one")
print("created:", made.spec.replicas, [m.manager + "/" + m.operation for m in made.metadata.managedFields if m.manager == "py-one"])
dry = client.server_side_apply(deployments, body=deploy(1, "nginx"), name="py-ssa", namespace="default", field_manager="py-one", dry_run="All")
print("dry-run answered:", dry.spec.template.spec.containers[0].image, "stored:", deployments.get(name="py-ssa", namespace="default").spec.template.spec.containers[0].image)
try:
    client.server_side_apply(deployments, body=deploy(2), name="py-ssa", namespace="default", field_manager="py-two")
    print("conflict: none")
except ConflictError as e:
    print("conflict:", e.status, e.summary())
forced = client.server_side_apply(deployments, body=deploy(2), name="py-ssa", namespace="default", field_manager="py-two", force_conflicts=True)
print("forced:", forced.spec.replicas)

# A YAML body as written by hand: E1 is a name and 12:30:00 a string, as sigs.k8s.io/yaml reads them.
yaml_deploy = """apiVersion: apps/v1
kind: Deployment
metadata: {name: py-yaml, namespace: default}
spec:
  selector: {matchLabels: {app: py-yaml}}
  template:
    metadata: {labels: {app: py-yaml}}
    spec:
      containers:
      - name: c
        image: busybox
        env:
        - name: E1
          value: 12:30:00
"""
made = client.server_side_apply(deployments, body=yaml_deploy, name="py-yaml", namespace="default", field_manager="py-yaml")
env = made.spec.template.spec.containers[0].env[0]
print("yaml body:", env.name, env.value)
