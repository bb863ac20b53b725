# The official Python client's kubernetes.stream.portforward against tskube
# apiserver: an HTTP request to a real pod's port over the WebSocket channel
# protocol. Prints one line; the e2e test asserts on it.
import sys

from kubernetes import client, config
from kubernetes.stream import portforward

config.load_kube_config(sys.argv[1])
v1 = client.CoreV1Api()
pf = portforward(v1.connect_get_namespaced_pod_portforward, sys.argv[2], "default", ports="8080")
sock = pf.socket(8080)
sock.setblocking(True)
sock.sendall(b"GET /index.html HTTP/1.0\r\nHost: pod\r\n\r\n")
reply = b""
while True:
    chunk = sock.recv(4096)
    if not chunk:
        break
    reply += chunk
sock.close()
print("portforward:", reply.decode().split("\r\n\r\n", 1)[-1].strip(), "error:", pf.error(8080))
