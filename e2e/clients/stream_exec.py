# The official Python client's kubernetes.stream against tskube apiserver:
# exec into a real pod over WebSocket (v4.channel.k8s.io), with stdout,
# stderr, stdin and the exit status from the error channel.
# Prints one line per check; the e2e test asserts on them.
import sys

from kubernetes import client, config
from kubernetes.stream import stream

config.load_kube_config(sys.argv[1])
v1 = client.CoreV1Api()
pod = sys.argv[2]

out = stream(v1.connect_get_namespaced_pod_exec, pod, "default", command=["cat", "/etc/hostname"], stderr=True, stdin=False, stdout=True, tty=False)
print("exec:", out.strip())

resp = stream(v1.connect_get_namespaced_pod_exec, pod, "default", command=["sh", "-c", "read line; echo got:$line; echo oops >&2; exit 7"], stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False)
resp.write_stdin("from-python\n")
resp.run_forever(timeout=10)
print("stdout:", resp.read_stdout().strip())
print("stderr:", resp.read_stderr().strip())
print("returncode:", resp.returncode)
resp.close()
