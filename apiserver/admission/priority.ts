// scheduling.k8s.io/v1 PriorityClass: the two system classes every apiserver
// has, validation, and upstream's Priority admission plugin for pods being
// created (spec.priority and preemptionPolicy from the named class, or from
// the global default class).
import type { Cause } from '../api/errors.js';
import { errors } from '../api/errors.js';
import type { Obj } from '../storage/store.js';

export const SYSTEM_PRIORITY_CLASSES: Obj[] = [
  {
    name: 'system-node-critical',
    value: 2000001000,
    description: 'Used for system critical pods that must not be moved from their current node.',
  },
  {
    name: 'system-cluster-critical',
    value: 2000000000,
    description:
      'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
].map((c) => ({
  apiVersion: 'scheduling.k8s.io/v1',
  kind: 'PriorityClass',
  metadata: { name: c.name },
  value: c.value,
  description: c.description,
  preemptionPolicy: 'PreemptLowerPriority',
}));

const HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000;

/** ValidatePriorityClass: user classes up to 10^9, the system- prefix reserved, a known preemption policy. */
export function validatePriorityClass(pc: Obj): Cause[] {
  const causes: Cause[] = [];
  const name = String(pc.metadata?.name ?? '');
  const system = SYSTEM_PRIORITY_CLASSES.find((s) => s.metadata.name === name);
  if (name.startsWith('system-') && !system)
    causes.push({
      field: 'metadata.name',
      message: `Invalid value: ${JSON.stringify(name)}: priority class names with 'system-' prefix are reserved`,
    });
  if (!Number.isInteger(pc.value))
    causes.push({ field: 'value', reason: 'FieldValueRequired', message: 'Required value' });
  else if (!system && pc.value > HIGHEST_USER_DEFINABLE_PRIORITY)
    causes.push({
      field: 'value',
      reason: 'FieldValueForbidden',
      message: `Forbidden: maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`,
    });
  if (pc.preemptionPolicy !== undefined && !['Never', 'PreemptLowerPriority'].includes(pc.preemptionPolicy))
    causes.push({
      field: 'preemptionPolicy',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(pc.preemptionPolicy)}: supported values: "Never", "PreemptLowerPriority"`,
    });
  return causes;
}

/** ValidatePriorityClassUpdate: the value and the preemption policy are immutable. */
export function validatePriorityClassUpdate(next: Obj, cur: Obj): Cause[] {
  const causes: Cause[] = [];
  if (next.value !== cur.value)
    causes.push({
      field: 'value',
      reason: 'FieldValueForbidden',
      message: 'Forbidden: may not be changed in an update.',
    });
  if ((next.preemptionPolicy ?? 'PreemptLowerPriority') !== (cur.preemptionPolicy ?? 'PreemptLowerPriority'))
    causes.push({
      field: 'preemptionPolicy',
      message: `Invalid value: ${JSON.stringify(next.preemptionPolicy)}: field is immutable`,
    });
  return causes;
}

/** Only one class may be the global default (upstream's admission on PriorityClass create and update). */
export function checkSingleDefault(pc: Obj, all: Obj[]): void {
  if (!pc.globalDefault) return;
  const other = all.find((c) => c.globalDefault && c.metadata.name !== pc.metadata.name);
  if (other)
    throw errors.forbiddenObject(
      'priorityclasses',
      'scheduling.k8s.io',
      pc.metadata.name,
      `PriorityClass ${other.metadata.name} is already marked as default. Only one default can exist`,
    );
}

/** The Priority admission plugin (pods, create): spec.priority and preemptionPolicy come from the class. */
export function admitPriority(pod: Obj, getClass: (name: string) => Obj | undefined, all: () => Obj[]): void {
  const spec = (pod.spec ??= {}) as Obj;
  const name = String(pod.metadata?.name ?? '');
  let pc: Obj | undefined;
  if (spec.priorityClassName) {
    pc = getClass(spec.priorityClassName);
    if (!pc)
      throw errors.forbiddenObject('pods', '', name, `no PriorityClass with name ${spec.priorityClassName} was found`);
  } else {
    pc = all().find((c) => c.globalDefault);
    if (pc) spec.priorityClassName = pc.metadata.name;
  }
  const value = pc?.value ?? 0;
  // A priority set by the client must agree with what the class says (0, the default, is taken as unset).
  if (spec.priority !== undefined && spec.priority !== 0 && spec.priority !== value)
    throw errors.forbiddenObject(
      'pods',
      '',
      name,
      `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${value} from the given PriorityClass name`,
    );
  spec.priority = value;
  if (pc) spec.preemptionPolicy = pc.preemptionPolicy ?? 'PreemptLowerPriority';
}
