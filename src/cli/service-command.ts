import type { Command } from 'commander';
import { type AgentConfig, agentConfigPath, agentSecrets, loadAgentConfig } from '../config/index.js';
import { ExitStatus, isMpprovError } from '../core/errors.js';
import { Redactor } from '../core/redact.js';
import { visibleLines } from '../core/visible-text.js';
import { formatProblem } from '../report/index.js';
import {
  type Appliance,
  appliancesNamed,
  checkService,
  createDataApiClient,
  type DataApi,
  type MpPathsReport,
  organizationName,
  reportMpPaths,
  serviceTarget,
} from '../service/index.js';
import { jsonVersionLine } from './json-version.js';

/**
 * `mpprov service check`, `service status HOSTNAME...` and `service paths HOSTNAME...`: agent.yaml's `service` block
 * put to the monitoring service itself. Everything printed passes the redactor, which knows the token.
 */

interface ServiceFlags {
  agentConfig?: string;
  json?: boolean;
}

export function registerServiceCommand(program: Command): void {
  const service = program
    .command('service')
    .description("the monitoring service's data API, as agent.yaml's service block reaches it");
  service
    .command('check')
    .description(
      'check the service settings: TLS, the token, the organizations it sees, access to the MPs (exit 1 on a failed check)',
    )
    .option('--agent-config <file>', 'agent configuration (default $MPPROV_AGENT_CONFIG or /etc/mpprov/agent.yaml)')
    .option('--json', 'one JSON object with every check')
    .action(async (flags: ServiceFlags) => {
      process.exitCode = await withService(flags, async (api, agent, print) => {
        const trust = agent.service?.caPem === undefined ? 'system store' : 'service.tls.ca and the system store';
        const lines = await checkService(api, { trust });
        const ok = lines.every((l) => l.ok) && lines.length === 4;
        if (flags.json === true) print(JSON.stringify({ url: api.url, ok, checks: lines }));
        else {
          for (const line of lines) print(`${line.ok ? 'ok  ' : 'FAIL'}  ${line.check.padEnd(13)} ${line.text}`);
          print(ok ? `service: OK (${api.url})` : `service: FAILED (${api.url})`);
        }
        return ok ? ExitStatus.Ok : ExitStatus.Failure;
      });
    });
  service
    .command('status')
    .description(
      'what the service says about Monitoring Points: connection status, resolved IP, organization, MAC (exit 1 if one is unknown or not AVAILABLE)',
    )
    .argument('<hostname...>', "the MPs' hostnames (or names) as the service knows them")
    .option('--agent-config <file>', 'agent configuration (default $MPPROV_AGENT_CONFIG or /etc/mpprov/agent.yaml)')
    .option('--json', 'one JSON object per hostname, after the version line')
    .action(async (hostnames: string[], flags: ServiceFlags) => {
      if (flags.json === true) process.stdout.write(`${jsonVersionLine()}\n`);
      process.exitCode = await withService(flags, async (api, agent, print) => {
        const organizations = new Map((await api.listOrganizations()).map((o) => [o.id, organizationName(o)]));
        let allAvailable = true;
        for (const hostname of hostnames) {
          const listed = await appliancesNamed(api, hostname, agent.service?.orgId);
          if (listed.length === 0) {
            allAvailable = false;
            if (flags.json === true) print(JSON.stringify({ hostname, known: false }));
            else print(`${hostname}  unknown to the service`);
            continue;
          }
          for (const a of listed) {
            if (a.connectionStatus !== 'AVAILABLE') allAvailable = false;
            const org = a.orgId === undefined ? undefined : organizations.get(a.orgId);
            if (flags.json === true) print(JSON.stringify({ known: true, ...a, orgName: org ?? null }));
            else print(statusLine(a, org));
          }
        }
        return allAvailable ? ExitStatus.Ok : ExitStatus.Failure;
      });
    });
  service
    .command('paths')
    .description(
      "each Monitoring Point's network paths in the service: target, status, time of the last data (exit 1 if an MP is unknown)",
    )
    .argument('<hostname...>', "the MPs' hostnames (or names) as the service knows them")
    .option('--agent-config <file>', 'agent configuration (default $MPPROV_AGENT_CONFIG or /etc/mpprov/agent.yaml)')
    .option('--json', 'one JSON object per hostname, after the version line')
    .action(async (hostnames: string[], flags: ServiceFlags) => {
      if (flags.json === true) process.stdout.write(`${jsonVersionLine()}\n`);
      process.exitCode = await withService(flags, async (api, agent, print) => {
        let allKnown = true;
        for (const hostname of hostnames) {
          const report = await reportMpPaths(api, hostname, { orgId: agent.service?.orgId });
          if (!report.known) allKnown = false;
          if (flags.json === true) print(JSON.stringify(pathsJson(report)));
          else for (const line of pathsLines(report)) print(line);
        }
        return allKnown ? ExitStatus.Ok : ExitStatus.Failure;
      });
    });
}

/** `mp1  AVAILABLE  IP 198.51.100.7  org Branch Networks (12)  MAC 00:1b:21:3a:4f:10` */
function statusLine(a: Appliance, org: string | undefined): string {
  const name = a.hostname ?? a.name;
  const orgText = a.orgId === undefined ? '-' : org === undefined ? String(a.orgId) : `${org} (${a.orgId})`;
  return `${name}  ${a.connectionStatus}  IP ${a.resolvedIp ?? '-'}  org ${orgText}  MAC ${a.macAddress ?? '-'}`;
}

function pathsLines(report: MpPathsReport): string[] {
  if (!report.known) return [`${report.hostname}  unknown to the service`];
  if (report.orgId === undefined)
    return [`${report.hostname}  paths not listed: the service did not say its organization (set service.org_id)`];
  if (report.paths.length === 0) return [`${report.hostname}  no paths`];
  return report.paths.map((p) =>
    [
      `${report.hostname}  path ${p.id} to ${p.target}`,
      p.status ?? 'no status',
      p.lastDataAt === undefined ? 'no data in the last hour' : `last data ${new Date(p.lastDataAt).toISOString()}`,
      ...(p.location === undefined ? [] : [`location ${p.location}`]),
    ].join('  '),
  );
}

function pathsJson(report: MpPathsReport): Record<string, unknown> {
  if (!report.known) return { hostname: report.hostname, known: false };
  return {
    hostname: report.hostname,
    known: true,
    name: report.appliance.name,
    orgId: report.orgId ?? null,
    paths: report.paths.map((p) => ({
      id: p.id,
      target: p.target,
      status: p.status ?? null,
      lastData: p.lastDataAt === undefined ? null : new Date(p.lastDataAt).toISOString(),
      location: p.location ?? null,
    })),
  };
}

/** Loads agent.yaml, makes the client, runs `body`, and turns any failure into one sentence. */
async function withService(
  flags: ServiceFlags,
  body: (api: DataApi, agent: AgentConfig, print: (text: string) => void) => Promise<number>,
): Promise<number> {
  const redactor = new Redactor();
  // The service's sentences and names are its text: every line is shown with its controls escaped.
  const print = (text: string): void => void process.stdout.write(`${visibleLines(redactor.text(text))}\n`);
  const fail = (text: string): void => void process.stderr.write(`${visibleLines(redactor.text(text))}\n`);
  const loaded = await loadAgentConfig(agentConfigPath(flags.agentConfig));
  redactor.add(agentSecrets(loaded.config));
  if (loaded.problems.length > 0) {
    for (const problem of loaded.problems) fail(formatProblem(problem));
    return ExitStatus.Failure;
  }
  const settings = loaded.config.service;
  if (settings === undefined) {
    fail(
      `mpprov service: ${loaded.config.file ?? agentConfigPath(flags.agentConfig)} has no service block (url, token_file or token_credential)`,
    );
    return ExitStatus.Failure;
  }
  let api: DataApi | undefined;
  try {
    api = createDataApiClient(serviceTarget(settings));
    return await body(api, loaded.config, print);
  } catch (error) {
    if (!isMpprovError(error)) throw error;
    fail(`mpprov service: ${error.message}`);
    return ExitStatus.Failure;
  } finally {
    await api?.close();
  }
}
