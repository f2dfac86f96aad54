import type { Command } from 'commander';
import { ExitStatus } from '../core/errors.js';
import { isSimulatorError, runSimulate, type SimulateFlags } from '../simulator/index.js';

/**
 * `mpprov simulate`: the flags, handed to the simulator (simulator/run-simulate.ts), which reads
 * them, serves until SIGINT or SIGTERM and prints how to reach it. The simulator's refusals are
 * one sentence on stderr and the CLI's exit status for usage or failure.
 */

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description('serve a simulated Monitoring Point (Admin API v1) on loopback, to rehearse a stick or test against')
    .option('--port <n>', 'HTTPS port (default: a free port; fleet: device n gets port + n)')
    .option('--host <address>', 'address to listen on; loopback only unless --allow-remote', '127.0.0.1')
    .option('--allow-remote', 'allow a non-loopback --host')
    .option('--cert <file>', 'TLS certificate (PEM) instead of a self-issued one; needs --key')
    .option('--key <file>', 'private key (PEM) of --cert')
    .option('--username <name>', 'administrative user', 'admin')
    .option('--password <password>', 'administrative password (default: random)')
    .option('--model <name>', 'built-in model: m50 (default), m22, m70, virtual')
    .option('--device <file>', 'device file (YAML or JSON): model, interfaces, starting configuration')
    .option('--mgmt <interface>', 'the interface clients reach the device through', 'eth0')
    .option(
      '--switch <port=spec>',
      'switch port facing a physical port: eth0=dot1x:PROFILE.yaml or eth0=open (repeatable)',
      collect,
      [],
    )
    .option(
      '--dot1x-backend <name>',
      'who decides 802.1X on those ports: model (in-process) or real (hostapd and wpa_supplicant in network namespaces; needs root)',
      'model',
    )
    .option(
      '--show-dot1x-state',
      "show dot1x_state in GET /interface/ (a rehearsal aid beyond the Admin API model; default: the model's view)",
    )
    .option('--restart-ms <ms>', 'outage after a networking restart', '3000')
    .option('--reboot-ms <ms>', 'outage after a reboot', '15000')
    .option('--fault <spec>', 'inject a fault: KIND[=VALUE][,times=N][@[METHOD ]PATH] (repeatable)', collect, [])
    .option('--no-rate-limit', 'switch off the limit on PUT /service/... (1 per second, 12 per minute)')
    .option('--control-port <n>', 'port of the test-only control server (default: a free port)')
    .option('--devices <n>', 'serve a fleet of N independent devices')
    .option('--manifest <file>', 'fleet: write the manifest (URLs, passwords, fingerprints) to FILE instead of stdout')
    .option('--service', "also serve a simulated monitoring service (data API) whose MPs follow the devices' restarts")
    .option(
      '--service-reconnect-ms <ms>',
      'service: how long an MP stays UNAVAILABLE after its device answers again',
      '5000',
    )
    .option('--service-hostname <name>', "service: the MP's hostname (fleet: NAME-1 ... NAME-N)", 'sim-mp')
    .option('--service-port <n>', 'service: HTTPS port (default: a free port)')
    .option(
      '--service-files <dir>',
      'service: write the token (service-token) and the CA (service-ca.pem) into DIR for agent.yaml',
    )
    .option('--service-orgs <k>', 'service: spread the MPs over K organizations (ids 12 ...), round-robin', '1')
    .option(
      '--service-path-data-ms <ms>',
      "service: delay from a path's creation (and its MP being AVAILABLE) to its first data",
      '3000',
    )
    .option('--service-legacy-shapes', "service: answer in the earlier model's shapes (name, {status, message})")
    .option(
      '--service-org-admin',
      "service: the printed token is an Organization Admin's (GET /v3/observer?allUsers=true)",
    )
    .option(
      '--service-events-ca <file>',
      'service: also trust this CA for HTTPS event receivers (else the default store)',
    )
    .option(
      '--service-event-fault <spec>',
      'service: an event delivery fault: drop|duplicate|reorder|delay=MS[,times=N] (repeatable)',
      collect,
      [],
    )
    .option('--json', 'print one line of JSON instead of text')
    .action(async (flags: SimulateFlags) => {
      try {
        await runSimulate(flags);
        process.exitCode = ExitStatus.Ok;
      } catch (error) {
        if (!isSimulatorError(error)) throw error;
        process.stderr.write(`mpprov simulate: ${error.message}\n`);
        process.exitCode = error.isUsage ? ExitStatus.Usage : ExitStatus.Failure;
      }
    });
}
