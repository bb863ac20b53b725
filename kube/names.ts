// Kubernetes name rules (apimachinery validation), shared by agents and apiserver.
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Returns a problem description, or undefined if valid. */
export function checkDns1123Label(v: string): string | undefined {
  if (v.length > 63) return `must be no more than 63 characters`;
  if (!DNS1123_LABEL.test(v))
    return `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`;
  return undefined;
}

export function checkDns1123Subdomain(v: string): string | undefined {
  if (v.length > 253) return `must be no more than 253 characters`;
  if (!DNS1123_SUBDOMAIN.test(v))
    return `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
  return undefined;
}
