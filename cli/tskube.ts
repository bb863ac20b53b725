// The tskube command: one subcommand per daemon.
import { createLogger } from '../kube/log.js';
import { AGENT_FLAGS, loadAgentConfig } from './agent-config.js';
import { APISERVER_FLAGS, loadApiServerConfig } from './apiserver-config.js';
import { PROXY_FLAGS, loadProxyConfig } from './proxy-config.js';
import { cleanupProxyRules, startProxy } from '../proxy/main.js';
import { startApiServer } from '../apiserver/main.js';
import { startAgent } from './agent.js';
import { runUp, UP_FLAGS } from './up.js';
import { runToken, TOKEN_FLAGS } from './token.js';
import { JOIN_FLAGS, runJoin } from './join.js';
import { DNS_FLAGS, loadDnsConfig } from './dns-config.js';
import { startDns } from '../dns/main.js';

function usage(): string {
  const list = (f: Record<string, string>) => Object.entries(f).map(([k, v]) => `  --${k}  ${v}`).join('\n');
  return `usage: tskube up|join|agent|proxy|apiserver|dns|token [flags]\n\nup flags:\n${list(UP_FLAGS)}\n\njoin https://<server>:<port> flags:\n${list(JOIN_FLAGS)}\n\nagent flags:\n${list(AGENT_FLAGS)}\n\nproxy flags:\n${list(PROXY_FLAGS)}\n\napiserver flags:\n${list(APISERVER_FLAGS)}\n\ndns flags:\n${list(DNS_FLAGS)}\n\ntoken create|list|delete flags:\n${list(TOKEN_FLAGS)}\n`;
}

async function runAgent(argv: string[]): Promise<void> {
  const boot = createLogger('kubelet');
  const cfg = loadAgentConfig(argv, (m) => boot.warn(m));
  const log = createLogger('kubelet', { verbosity: cfg.verbosity });
  const agent = await startAgent(cfg, log);
  let stopping = false;
  const shutdown = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    log.info(`received ${sig}; stopping (pods keep running)`);
    void agent.stop().finally(() => process.exit(0));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function runProxy(argv: string[]): Promise<void> {
  const boot = createLogger('kube-proxy');
  const cfg = loadProxyConfig(argv, (m) => boot.warn(m));
  const log = createLogger('kube-proxy', { verbosity: cfg.verbosity });
  if (cfg.cleanup) {
    const failed = await cleanupProxyRules(log);
    process.exit(failed ? 1 : 0);
  }
  log.info(`starting kube-proxy (${cfg.mode} mode) on node ${cfg.nodeName}`);
  const running = await startProxy(cfg, log);
  let stopping = false;
  const shutdown = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    log.info(`received ${sig}; stopping (${cfg.mode} rules stay in place)`);
    void running.stop().finally(() => process.exit(0));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function main(): Promise<void> {
  const [cmd, ...rest] = process.argv.slice(2);
  switch (cmd) {
    case 'agent':
      await runAgent(rest);
      return;
    case 'proxy':
      await runProxy(rest);
      return;
    case 'up':
      await runUp(rest);
      return;
    case 'join':
      await runJoin(rest);
      return;
    case 'token':
      await runToken(rest);
      return;
    case 'dns': {
      const cfg = loadDnsConfig(rest);
      const log = createLogger('dns', { verbosity: cfg.verbosity });
      const running = await startDns(cfg, log);
      const stop = (): void => void running.stop().finally(() => process.exit(0));
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      return;
    }
    case 'apiserver': {
      const running = await startApiServer(loadApiServerConfig(rest));
      const stop = (): void => void running.stop().finally(() => process.exit(0));
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      return;
    }
    case '-h':
    case '--help':
    case 'help':
    case undefined:
      process.stdout.write(usage());
      return;
    default:
      process.stderr.write(`tskube: unknown command "${cmd}"\n${usage()}`);
      process.exit(2);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`tskube: ${(e as Error).message}\n`);
  process.exit(1);
});
