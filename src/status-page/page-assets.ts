/**
 * The page's HTML, CSS and script as string constants: they survive tsc and the one-file esbuild
 * bundle alike, with no asset to copy or to find at run time, and the page loads nothing from
 * elsewhere. The script is served as /page.js (no inline script: the CSP forbids any), builds
 * every element with textContent (a stick's label or a log line is never read as HTML), and
 * follows /events; elapsed times tick in the browser, so the server sends only real changes.
 */

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mpprov status</title>
<link rel="stylesheet" href="/page.css">
<script src="/page.js" defer></script>
</head>
<body>
<header>
<h1>mpprov</h1>
<span id="connection" data-state="connecting">connecting to the agent...</span>
<span id="agent"></span>
</header>
<main>
<section id="banners" aria-live="polite"><p class="empty">No stick yet: insert one that holds mpprov.yaml.</p></section>
<section>
<h2>Working now</h2>
<div id="live"><p class="empty">No job is running.</p></div>
</section>
<section>
<h2>Recent results</h2>
<div id="recent"><p class="empty">None yet.</p></div>
</section>
<section>
<h2>Service events of these MPs</h2>
<div id="service-events"><p class="empty">None.</p></div>
</section>
</main>
</body>
</html>
`;

export const PAGE_CSS = `
:root { font-family: system-ui, sans-serif; color: #1b1b1b; background: #f4f4f2; }
body { margin: 0; }
header { display: flex; gap: 1rem; align-items: baseline; padding: 0.6rem 1.2rem; background: #263238; color: #fff; }
header h1 { margin: 0; font-size: 1.4rem; }
#connection[data-state="live"] { color: #a5d6a7; }
#connection[data-state="lost"] { color: #ffab91; font-weight: bold; }
#agent { margin-left: auto; opacity: 0.8; font-size: 0.9rem; }
main { padding: 1rem 1.2rem; max-width: 70rem; }
h2 { font-size: 1.1rem; margin: 1.4rem 0 0.5rem; }
.empty { color: #666; }
.banner { border-radius: 0.6rem; padding: 1rem 1.4rem; margin: 0 0 0.8rem; border: 0.25rem solid transparent; }
.banner .word { font-size: 2.6rem; font-weight: 800; letter-spacing: 0.04em; }
.banner .what { font-size: 1.2rem; margin-top: 0.3rem; }
.banner .more { margin-top: 0.4rem; }
.banner-working { background: #fff3c4; border-color: #f0a800; color: #4a3500; }
.banner-safe { background: #2e7d32; border-color: #1b5e20; color: #fff; }
.banner-failed { background: #b71c1c; border-color: #7f0000; color: #fff; }
.banner-done { background: #37474f; border-color: #263238; color: #fff; }
.banner-unmount { background: #fff3c4; border-color: #b26a00; color: #4a3500; }
.banner .what, .job h3, .row-summary { overflow-wrap: anywhere; }
details.recent-job > summary { cursor: pointer; list-style-position: inside; }
.row-summary { font-size: 0.92rem; }
.row-reason { color: #444; }
@media (max-width: 480px) {
  header { flex-wrap: wrap; padding: 0.5rem 0.8rem; }
  main { padding: 0.6rem 0.8rem; }
  .banner { padding: 0.7rem 0.9rem; }
  .banner .word { font-size: 1.7rem; }
  .banner .what { font-size: 1rem; }
}
.job { background: #fff; border-radius: 0.4rem; padding: 0.7rem 1rem; margin-bottom: 0.7rem; box-shadow: 0 1px 2px rgba(0,0,0,0.15); }
.job h3 { margin: 0 0 0.3rem; font-size: 1rem; }
.result-word { font-weight: 700; }
.result-FAILED { color: #b71c1c; }
.result-CHANGED, .result-OK, .result-NO-CHANGE { color: #2e7d32; }
table { border-collapse: collapse; width: 100%; font-size: 0.92rem; }
td, th { text-align: left; padding: 0.15rem 0.5rem 0.15rem 0; vertical-align: top; }
.state-running { color: #8a6d00; font-weight: 600; }
.state-done { color: #2e7d32; }
.state-failed { color: #b71c1c; font-weight: 600; }
.state-waiting { color: #666; }
pre { background: #111; color: #eee; padding: 0.6rem; overflow: auto; max-height: 30rem; font-size: 0.8rem; white-space: pre-wrap; }
`;

export const PAGE_JS = `'use strict';
(function () {
  var status = null;
  var logs = {};
  var openLogs = {};
  var openRows = {};

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function elapsed(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    var two = function (n) { return (n < 10 ? '0' : '') + n; };
    return h > 0 ? h + 'h ' + two(m) + 'm ' + two(r) + 's' : m > 0 ? m + 'm ' + two(r) + 's' : r + 's';
  }
  function clock(iso) { return new Date(iso).toLocaleTimeString(); }
  function ticking(since, until) {
    var span = el('span', 'elapsed');
    span.dataset.since = since;
    if (until) span.dataset.until = until;
    return span;
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll('[data-since]').forEach(function (node) {
      var end = node.dataset.until ? Date.parse(node.dataset.until) : now;
      node.textContent = elapsed(end - Date.parse(node.dataset.since));
    });
  }
  function what(job) {
    return job.kind === 'stick' ? 'Stick ' + job.label + ' (' + job.location + ')' : 'Profile ' + job.label;
  }
  function replace(target, nodes, empty) {
    target.replaceChildren.apply(target, nodes.length > 0 ? nodes : [el('p', 'empty', empty)]);
  }

  function banner(job) {
    var kinds = { 'WORKING': 'working', 'SAFE TO REMOVE': 'safe', 'FAILED': 'failed', 'DONE': 'done', 'UNMOUNT FIRST': 'unmount', 'INSERT AGAIN': 'failed' };
    var box = el('div', 'banner banner-' + (kinds[job.banner] || 'done'));
    box.dataset.banner = job.banner;
    box.dataset.job = job.id;
    box.appendChild(el('div', 'word', job.banner === 'FAILED' ? 'FAILED: what to do' : job.banner));
    box.appendChild(el('div', 'what', what(job)));
    if (job.banner === 'WORKING') {
      var stage = job.stage.charAt(0).toUpperCase() + job.stage.slice(1);
      var more = el('div', 'more', (job.kind === 'stick' ? 'Do not remove it. ' : '') + stage + ', started ' + clock(job.started) + ' (');
      more.appendChild(ticking(job.started));
      more.appendChild(document.createTextNode(' ago)'));
      box.appendChild(more);
    } else if (job.banner === 'FAILED') {
      box.appendChild(el('div', 'more advice', job.advice || job.summary || 'the job failed'));
      if (job.advice && job.summary) box.appendChild(el('div', 'more summary', job.summary));
    } else {
      // The summary ends with what to do with the stick now, as the agent found it (job.removal).
      box.appendChild(el('div', 'more summary', job.summary || ''));
    }
    return box;
  }

  function steps(job) {
    var table = el('table', 'steps');
    var head = el('tr');
    ['device', 'step', 'state', 'time'].forEach(function (t) { head.appendChild(el('th', null, t)); });
    table.appendChild(head);
    job.steps.forEach(function (step) {
      var row = el('tr', 'step');
      row.dataset.state = step.state;
      row.appendChild(el('td', null, step.device));
      row.appendChild(el('td', null, step.text));
      row.appendChild(el('td', 'state-' + step.state, step.state));
      var time = el('td');
      time.appendChild(ticking(step.started, step.ended));
      row.appendChild(time);
      table.appendChild(row);
    });
    if (job.omittedSteps) {
      var more = el('tr', 'step omitted');
      var cell = el('td', null, job.omittedSteps + ' more step(s) not shown: the usb.log of this job has them all');
      cell.colSpan = 4;
      more.appendChild(cell);
      table.appendChild(more);
    }
    return table;
  }

  function liveJob(job) {
    var box = el('div', 'job live-job');
    box.dataset.job = job.id;
    var title = el('h3', null, what(job) + ': ' + job.stage + ' ');
    title.appendChild(ticking(job.started));
    box.appendChild(title);
    var devices = el('ul', 'devices');
    job.devices.forEach(function (d) {
      var item = el('li', null, d.name + ' ');
      item.appendChild(el('span', 'state-' + d.state, d.state));
      item.appendChild(document.createTextNode(': ' + d.at));
      devices.appendChild(item);
    });
    if (job.omittedDevices) devices.appendChild(el('li', 'omitted', 'and ' + job.omittedDevices + ' more device(s)'));
    box.appendChild(devices);
    if (job.steps.length > 0) box.appendChild(steps(job));
    return box;
  }

  function logView(job) {
    var details = el('details', 'log');
    details.dataset.job = job.id;
    details.appendChild(el('summary', null, 'usb.log of this job'));
    var pre = el('pre', null, logs[job.id] === undefined ? 'loading...' : logs[job.id]);
    details.appendChild(pre);
    if (openLogs[job.id]) details.open = true;
    details.addEventListener('toggle', function () {
      openLogs[job.id] = details.open;
      if (!details.open || logs[job.id] !== undefined) return;
      fetch('/jobs/' + encodeURIComponent(job.id) + '/log').then(function (res) {
        return res.text().then(function (text) { return res.ok ? text : 'the log cannot be shown: ' + text; });
      }).then(function (text) {
        logs[job.id] = text;
        pre.textContent = text;
        // The failure is at the end of the log: open it there.
        pre.scrollTop = pre.scrollHeight;
      }, function (error) { pre.textContent = 'the log cannot be loaded: ' + error; });
    });
    return details;
  }

  // A finished job as one compact row (devices, result, reason, time) that opens for its details;
  // the newest opens by itself, the others when asked (and stay as the person left them).
  function recentJob(job, newest) {
    var box = el('details', 'job recent-job');
    box.dataset.job = job.id;
    var row = el('summary', 'row-summary');
    row.appendChild(el('span', 'result-word result-' + String(job.result).replace(/ /g, '-'), job.result));
    var devices = job.devices.map(function (d) { return d.name; }).join(', ');
    row.appendChild(document.createTextNode(' ' + (devices || job.label) + ' \u00b7 ' + clock(job.finished) + ' '));
    var reason = job.result === 'FAILED' ? (job.advice || job.summary || '') : (job.removal || '');
    if (reason) row.appendChild(el('span', 'row-reason', reason.replace(/^What to do: /, '').split('. ')[0]));
    box.appendChild(row);
    var title = el('h3', null, what(job) + ', ended ' + clock(job.finished) + ' after ');
    title.appendChild(ticking(job.started, job.finished));
    box.appendChild(title);
    box.appendChild(el('p', 'summary', job.summary));
    if (job.advice) box.appendChild(el('p', 'advice', job.advice));
    box.appendChild(logView(job));
    box.open = openRows[job.id] === undefined ? newest : openRows[job.id];
    box.addEventListener('toggle', function () { openRows[job.id] = box.open; });
    return box;
  }

  function render() {
    var jobs = status.jobs;
    var seen = {};
    var banners = [];
    var finishedShown = false;
    jobs.forEach(function (job) {
      // One banner per running stick (its newest job), and one for the newest finished stick job:
      // older results are compact rows below, so ten sticks do not make ten screens.
      var key = job.kind === 'stick' ? 'stick:' + job.location : 'profile:' + job.id;
      if (seen[key] || (job.kind === 'profile' && job.finished)) return;
      seen[key] = true;
      if (job.finished) {
        if (finishedShown) return;
        finishedShown = true;
      }
      banners.push(banner(job));
    });
    replace(document.getElementById('banners'), banners, 'No stick yet: insert one that holds mpprov.yaml.');
    replace(document.getElementById('live'), jobs.filter(function (j) { return !j.finished; }).map(liveJob), 'No job is running.');
    replace(document.getElementById('recent'), jobs.filter(function (j) { return j.finished; }).map(function (job, i) { return recentJob(job, i === 0); }), 'None yet.');
    var agent = document.getElementById('agent');
    agent.textContent = 'agent ' + status.agent.version + ' on ' + status.agent.hostname + (status.agent.stopped ? ' (stopped)' : '');
    var words = banners.map(function (b) { return b.dataset.banner; });
    document.title = (words.length > 0 ? words[0] + ' - ' : '') + 'mpprov status';
    tick();
    serviceEvents();
  }

  // The service's text: every field set with textContent, never read as HTML.
  function serviceEvents() {
    fetch('/service-events.json').then(function (res) { return res.json(); }).then(function (lines) {
      var list = document.getElementById('service-events');
      var items = lines.slice(-50).map(function (line) {
        return el('p', 'service-event', line.received + '  ' + line.mp + '  ' + line.text);
      });
      replace(list, items, 'None.');
    }, function () { /* the next change asks again */ });
  }

  function connect() {
    var connection = document.getElementById('connection');
    var source = new EventSource('/events');
    source.addEventListener('open', function () {
      connection.dataset.state = 'live';
      connection.textContent = 'live';
    });
    source.addEventListener('snapshot', function (event) {
      status = JSON.parse(event.data);
      render();
    });
    source.addEventListener('error', function () {
      connection.dataset.state = 'lost';
      connection.textContent = 'no connection to the agent: retrying';
    });
  }

  document.addEventListener('DOMContentLoaded', connect);
  setInterval(tick, 1000);
})();
`;
