// Whether an exited container is started again (upstream ContainerShouldRestart, with
// ContainerRestartRules, beta since v1.35): a container's own restartPolicyRules, then
// its own restartPolicy, then the pod's.
import type { Container, PodSpec } from 'kubernetes-types/core/v1.js';

/** A container restart rule (v1.34+; kubernetes-types stops at v1.30). */
export interface ContainerRestartRule {
  action?: string;
  exitCodes?: { operator?: string; values?: number[] };
}

type ContainerWithRules = Container & { restartPolicyRules?: ContainerRestartRule[] };

/** The first rule whose exit codes match (In: listed, NotIn: not listed), as FindMatchingContainerRestartRule. */
export function matchingRestartRule(c: Container, exitCode: number): ContainerRestartRule | undefined {
  for (const rule of (c as ContainerWithRules).restartPolicyRules ?? []) {
    const listed = (rule.exitCodes?.values ?? []).includes(exitCode);
    if (rule.exitCodes?.operator === 'In' && listed) return rule;
    if (rule.exitCodes?.operator === 'NotIn' && !listed) return rule;
  }
  return undefined;
}

/** Whether `c`, exited with `exitCode`, is to be started again. */
export function containerShouldRestart(c: Container, spec: PodSpec | undefined, exitCode: number): boolean {
  if (c.restartPolicy !== undefined) {
    // RestartAllContainers restarts this container too, with all the others (restart-all.ts).
    const action = matchingRestartRule(c, exitCode)?.action;
    if (action === 'Restart' || action === 'RestartAllContainers') return true;
    if (c.restartPolicy === 'Always') return true;
    if (c.restartPolicy === 'OnFailure') return exitCode !== 0;
    if (c.restartPolicy === 'Never') return false;
  }
  const policy = spec?.restartPolicy ?? 'Always';
  if (policy === 'OnFailure') return exitCode !== 0;
  return policy !== 'Never';
}
