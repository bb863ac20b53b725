// YAML as Kubernetes reads it: sigs.k8s.io/yaml converts YAML to JSON with its fork of go-yaml v2, whose plain scalars
// resolve as YAML 1.1 does for null and booleans (`yes`, `off`, `Y`), as Go's ParseInt with base 0 for integers
// (`0x1F`, `0b101`, `0o17`, a leading 0 for octal, underscores dropped), and by its own float pattern; there are no
// base-60 numbers (`12:30:00` is a string), timestamps stay strings, and `E1` is a string. The apiserver's YAML bodies
// and the kubelet's static pod files use these options.
import type { DocumentOptions, ParseOptions, ScalarTag, SchemaOptions } from 'yaml';

const NULL_TAG = 'tag:yaml.org,2002:null';
const BOOL_TAG = 'tag:yaml.org,2002:bool';
const INT_TAG = 'tag:yaml.org,2002:int';
const FLOAT_TAG = 'tag:yaml.org,2002:float';

/** go-yaml v2's yamlStyleFloat, applied once underscores are dropped. */
const FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

/** Go's ParseInt(s, 0, 64) (and ParseUint) for what is left once underscores are dropped; undefined if it refuses. */
function parseGoInt(s: string): number | undefined {
  const sign = s.startsWith('-') ? -1 : 1;
  const body = s.replace(/^[-+]/, '');
  const prefixed: [RegExp, number][] = [
    [/^0[xX][0-9a-fA-F]+$/, 16],
    [/^0[bB][01]+$/, 2],
    [/^0[oO][0-7]+$/, 8],
  ];
  for (const [re, radix] of prefixed) if (re.test(body)) return sign * parseInt(body.slice(2), radix);
  if (/^0[0-7]+$/.test(body)) return sign * parseInt(body.slice(1), 8);
  if (/^(0|[1-9][0-9]*)$/.test(body)) return sign * Number(body);
  return undefined;
}

/** A plain scalar that looks numeric: an integer as Go parses it, else a float by go-yaml's pattern, else the text. */
function resolveNumber(source: string): number | string {
  const plain = source.replaceAll('_', '');
  const int = parseGoInt(plain);
  if (int !== undefined) return int;
  if (FLOAT.test(plain)) return Number(plain);
  return source;
}

const tags: ScalarTag[] = [
  { default: true, tag: NULL_TAG, test: /^(?:~|null|Null|NULL)?$/, resolve: () => null, identify: (v) => v === null },
  {
    default: true,
    tag: BOOL_TAG,
    test: /^(?:y|Y|yes|Yes|YES|on|On|ON|true|True|TRUE)$/,
    resolve: () => true,
    identify: (v) => v === true,
  },
  {
    default: true,
    tag: BOOL_TAG,
    test: /^(?:n|N|no|No|NO|off|Off|OFF|false|False|FALSE)$/,
    resolve: () => false,
    identify: (v) => v === false,
  },
  {
    default: true,
    tag: FLOAT_TAG,
    test: /^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
    // JSON has no infinities or NaN: sigs.k8s.io/yaml's conversion fails on them.
    resolve: (s, onError) => {
      onError(`json: unsupported value: ${/nan/i.test(s) ? 'NaN' : s.startsWith('-') ? '-Inf' : '+Inf'}`);
      return s;
    },
  },
  {
    default: true,
    tag: INT_TAG,
    test: /^[-+]?(?:[0-9][0-9a-fA-FxXoObB_]*|\.[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9_]+)?$/,
    resolve: (s) => resolveNumber(s),
    identify: (v) => typeof v === 'number',
  },
];

/** Options for `yaml`'s parse functions that read YAML as Kubernetes does. */
export const K8S_YAML: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.1',
  schema: 'failsafe',
  customTags: tags,
  merge: true,
  // go-yaml v2 keeps the last of duplicate keys.
  uniqueKeys: false,
};
