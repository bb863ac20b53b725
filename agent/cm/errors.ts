/** A configuration the kubelet must not run with (upstream exits): retrying cannot help. */
export class FatalConfigError extends Error {}
