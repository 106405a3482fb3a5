/**
 * The live page's markup and style (UiAssets.ts serves them; UiScript.ts fills the page in). The
 * markup holds no data and no secret: everything shown is read from `/v1` by the script.
 */

/** `/ui`. */
export const html = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>mcpx-fx</title>
<link rel="stylesheet" href="/ui/app.css">
<link rel="icon" href="/ui/icon.svg" type="image/svg+xml">
<script src="/ui/app.js" defer></script>
</head>
<body>
<header>
  <h1>mcpx-fx</h1>
  <span id="daemon"></span>
  <span id="access" class="badge"></span>
  <span id="stream" class="badge"></span>
</header>
<p id="notice" hidden></p>
<main>
  <section>
    <h2>Servers</h2>
    <table id="servers">
      <thead><tr><th>Server</th><th>Era</th><th>Negotiated</th><th>Era source</th><th>Instances</th><th>Health</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
  <section>
    <h2>Pending questions</h2>
    <div id="questions"><p class="empty">None.</p></div>
  </section>
  <section>
    <h2>Recent calls</h2>
    <table id="calls">
      <thead><tr><th>When</th><th>Tool</th><th>Caller</th><th>Duration</th><th>Outcome</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
  <section>
    <h2>Tasks</h2>
    <table id="tasks">
      <thead><tr><th>Task</th><th>Status</th><th>Created</th><th>Updated</th><th>Message</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
  <section>
    <h2>Events</h2>
    <ol id="events" reversed></ol>
  </section>
</main>
</body>
</html>
`

/** `/ui/app.css`. */
export const css = String.raw`:root { color-scheme: light dark; --muted: #888; --ok: #2e7d32; --bad: #c62828; --warn: #ef6c00; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 0 1rem 2rem; }
header { display: flex; align-items: baseline; gap: 1rem; flex-wrap: wrap; border-bottom: 1px solid var(--muted); }
h1 { font-size: 1.4rem; margin: .6rem 0; }
h2 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
#daemon, .empty, small, .muted { color: var(--muted); }
.badge { border: 1px solid var(--muted); border-radius: .8rem; padding: 0 .6rem; font-size: .85rem; }
#notice { border-left: 3px solid var(--warn); padding: .3rem .7rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid rgba(128, 128, 128, .25); vertical-align: top; }
th { font-weight: 600; font-size: .85rem; }
code, .mono { font-family: ui-monospace, monospace; font-size: .9em; }
.ok, .completed { color: var(--ok); }
.error, .failed, .tool-error, .bad { color: var(--bad); }
.input-required, .input_required, .cancelled, .warn { color: var(--warn); }
.question { border: 1px solid rgba(128, 128, 128, .5); border-radius: .4rem; padding: .6rem .8rem; margin: .5rem 0; }
.question form { display: grid; gap: .5rem; max-width: 32rem; }
.question label { display: grid; gap: .15rem; }
.question .actions { display: flex; gap: .5rem; }
.question textarea { min-height: 4rem; font-family: ui-monospace, monospace; }
#events { font-family: ui-monospace, monospace; font-size: .85rem; max-height: 18rem; overflow: auto; padding-left: 3rem; }
`

/** `/ui/icon.svg`: the tab's icon (without one a browser asks for /favicon.ico, which is not there). */
export const icon = String
  .raw`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#3558a6"/><path d="M4 4l8 8M12 4l-8 8" stroke="#fff" stroke-width="2"/></svg>
`
