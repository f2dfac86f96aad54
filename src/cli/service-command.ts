import type { Command } from 'commander';
import { type AgentConfig, agentConfigPath, agentSecrets, loadAgentConfig } from '../config/index.js';
import { ExitStatus, isMpprovError } from '../core/errors.js';
import { Redactor } from '../core/redact.js';
import { visibleLines } from '../core/visible-text.js';
import { formatProblem } from '../report/index.js';
import {
  checkService,
  createDataApiClient,
  type DataApi,
  matchingAppliances,
  organizationName,
  serviceTarget,
} from '../service/index.js';
import { jsonVersionLine } from './json-version.js';

/**
 * `mpprov service check` and `mpprov service status HOSTNAME...`: agent.yaml's `service` block
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
      'what the service says about Monitoring Points: connection status, organization, MAC (exit 1 if one is unknown or not AVAILABLE)',
    )
    .argument('<hostname...>', "the MPs' hostnames as the service knows them")
    .option('--agent-config <file>', 'agent configuration (default $MPPROV_AGENT_CONFIG or /etc/mpprov/agent.yaml)')
    .option('--json', 'one JSON object per hostname, after the version line')
    .action(async (hostnames: string[], flags: ServiceFlags) => {
      if (flags.json === true) process.stdout.write(`${jsonVersionLine()}\n`);
      process.exitCode = await withService(flags, async (api, _agent, print) => {
        const organizations = new Map((await api.listOrganizations()).map((o) => [o.id, organizationName(o)]));
        let allAvailable = true;
        for (const hostname of hostnames) {
          const listed = matchingAppliances(await api.listAppliances({ hostname }), hostname);
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
            else
              print(
                `${a.hostname ?? a.name}  ${a.connectionStatus}  org ${org === undefined ? (a.orgId ?? '-') : `${org} (${a.orgId})`}  MAC ${a.macAddress ?? '-'}`,
              );
          }
        }
        return allAvailable ? ExitStatus.Ok : ExitStatus.Failure;
      });
    });
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
