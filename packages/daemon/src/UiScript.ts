/**
 * The live page's script (`/ui/app.js`): plain JS, no framework, nothing fetched but `/v1` of the
 * daemon that served it. Everything it puts on the page goes in as text (`textContent`, text
 * nodes), never as markup. It is a String.raw literal, so it uses no backquote and no dollar-brace.
 */

/** `/ui/app.js`. */
export const js = String.raw`
"use strict"
// The owner secret comes in the address's fragment, which no server log or Referer ever sees. It is
// kept in memory only and taken out of the address bar (and the history entry) at once.
const secret = (() => {
  const found = /(?:^|[#&])owner=([A-Za-z0-9_-]+)/.exec(location.hash)
  if (location.hash !== "") history.replaceState(null, "", location.pathname)
  return found === null ? undefined : found[1]
})()
const auth = secret === undefined ? {} : { authorization: "Bearer " + secret }
const $ = (id) => document.getElementById(id)

/** An element with attributes and children; strings become text nodes, never markup. */
const el = (tag, attrs, ...children) => {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs || {})) {
    if (typeof value === "function") node.addEventListener(key, value)
    else if (typeof value === "boolean") node[key] = value
    else if (value !== undefined) node.setAttribute(key, String(value))
  }
  node.append(...children.filter((c) => c !== undefined && c !== null))
  return node
}

const api = async (path, init) => {
  const response = await fetch(path, {
    ...init,
    cache: "no-store",
    headers: { ...auth, ...(init && init.body !== undefined ? { "content-type": "application/json" } : {}) }
  })
  const body = await response.json().catch(() => ({}))
  return { status: response.status, body }
}

const notice = (text) => {
  $("notice").hidden = text === undefined
  $("notice").textContent = text || ""
}
const time = (ms) => new Date(ms).toLocaleTimeString()
const short = (id) => (id.length > 12 ? id.slice(0, 8) + "\u2026" : id)

// ------------------------------------------------------------------------------ servers
const health = (row) => {
  const pool = row.pool
  if (row.auth && row.auth.state === "needs-login") return ["needs login", "bad"]
  if (pool === null) return ["not started", "muted"]
  const cooling = pool.lanes.find((lane) => lane.cooldown !== undefined)
  if (cooling) return ["cooling down: " + cooling.cooldown.failures + " failure(s)", "bad", cooling.cooldown.lastFailure]
  if (pool.legacyRefused !== undefined) return ["legacy refused", "warn", pool.legacyRefused]
  return pool.instances.some((i) => i.state === "ready") ? ["ok", "ok"] : ["idle", "muted"]
}

const refreshServers = async () => {
  const [status, protocol] = await Promise.all([api("/v1/status"), api("/v1/protocol")])
  if (status.status !== 200) {
    notice(status.status === 401 ? "The daemon wants its token: open this page at the address that mcpx-fx ui prints." : status.body.message)
    return
  }
  const d = status.body.daemon
  $("daemon").textContent = "v" + d.version + " \u00b7 pid " + d.pid + " \u00b7 up " + Math.round(d.uptimeMs / 1000) + "s"
  const eras = new Map(((protocol.body.asClient || {}).servers || []).map((s) => [s.server, s]))
  $("servers").tBodies[0].replaceChildren(...status.body.servers.map((row) => {
    const era = eras.get(row.name) || {}
    const instances = row.pool === null ? [] : row.pool.instances
    const [text, cls, detail] = health(row)
    return el("tr", { "data-server": row.name },
      el("td", {}, el("strong", {}, row.name), row.namespace === row.name ? undefined : el("small", {}, " " + row.namespace)),
      el("td", {}, era.era || "-", el("small", {}, " (" + row.preference + ")")),
      el("td", { class: "mono" }, era.negotiated || "-"),
      el("td", {}, era.eraSource || "-"),
      el("td", {}, instances.length === 0 ? "-" : instances.map((i) => i.state + (i.busy > 0 ? " (busy " + i.busy + ")" : "")).join(", ")),
      el("td", { class: cls, title: detail }, text))
  }))
}

// ------------------------------------------------------------------------------ questions
/** One form field from a property of an elicitation's requestedSchema (flat, as MCP has it). */
const field = (name, schema, required) => {
  const options = schema.enum || (schema.oneOf || []).map((o) => o.const)
  const multi = schema.type === "array" && schema.items && (schema.items.enum || (schema.items.anyOf || []).map((o) => o.const))
  let input
  if (schema.type === "boolean") input = el("input", { type: "checkbox", name, checked: schema.default === true })
  else if (multi || options.length > 0) {
    const values = multi || options
    input = el("select", { name, multiple: Boolean(multi), required }, ...values.map((v) => el("option", { value: v }, String(v))))
  } else {
    const type = schema.type === "number" || schema.type === "integer" ? "number"
      : ({ email: "email", uri: "url", date: "date" })[schema.format] || "text"
    input = el("input", {
      type, name, required, step: schema.type === "integer" ? "1" : type === "number" ? "any" : undefined,
      min: schema.minimum, max: schema.maximum, minlength: schema.minLength, maxlength: schema.maxLength,
      value: schema.default === undefined ? undefined : String(schema.default)
    })
  }
  input.dataset.kind = multi ? "multi" : schema.type || "string"
  return el("label", {}, el("span", {}, (schema.title || name) + (required ? " *" : "")),
    input, schema.description ? el("small", {}, schema.description) : undefined)
}

/** The form's values as the schema's types, leaving out empty optional ones. */
const content = (form) => {
  const out = {}
  for (const input of form.querySelectorAll("[name]")) {
    const kind = input.dataset.kind
    if (kind === "boolean") out[input.name] = input.checked
    else if (kind === "multi") out[input.name] = [...input.selectedOptions].map((o) => o.value)
    else if (input.value !== "") out[input.name] = kind === "number" || kind === "integer" ? Number(input.value) : input.value
  }
  return out
}

const answer = async (card, q, body) => {
  const result = await api("/v1/elicit/" + encodeURIComponent(q.id), { method: "POST", body: JSON.stringify(body) })
  const status = card.querySelector(".status")
  status.className = "status " + (result.status === 200 ? "ok" : "bad")
  status.textContent = result.status === 200 ? "answered" : result.body.message || "refused (" + result.status + ")"
  if (result.status === 200) card.querySelectorAll("button").forEach((b) => (b.disabled = true))
}

const questionCard = (q) => {
  const p = q.params
  const card = el("article", { class: "question", "data-id": q.id },
    el("div", {}, el("strong", {}, q.from), " asks ", el("code", {}, q.method),
      el("small", {}, " \u00b7 expires " + time(q.expiresAt))),
    typeof p.message === "string" ? el("p", {}, p.message) : undefined)
  const send = (body) => (event) => {
    event.preventDefault()
    answer(card, q, body())
  }
  const actions = (accept) =>
    el("div", { class: "actions" }, accept,
      el("button", { type: "button", class: "decline", click: send(() => ({ action: "decline" })) }, "Decline"),
      el("button", { type: "button", class: "cancel", click: send(() => ({ action: "cancel" })) }, "Cancel"))
  if (q.method !== "elicitation/create") {
    const result = el("textarea", { name: "result", placeholder: "the result, as JSON" })
    const form = el("form", { submit: send(() => ({ result: JSON.parse(result.value || "{}") })) }, result,
      el("div", { class: "actions" }, el("button", { type: "submit" }, "Answer")))
    card.append(form)
  } else if (p.mode === "url") {
    const safe = typeof p.url === "string" && /^https?:\/\//i.test(p.url)
    card.append(safe ? el("p", {}, el("a", { href: p.url, target: "_blank", rel: "noopener noreferrer" }, p.url)) : el("p", {}, String(p.url)))
    card.append(actions(el("button", { type: "button", class: "accept", click: send(() => ({ action: "accept" })) }, "Done")))
  } else {
    const schema = p.requestedSchema || {}
    const required = new Set(schema.required || [])
    const fields = Object.entries(schema.properties || {}).map(([name, s]) => field(name, s, required.has(name)))
    const form = el("form", {}, ...fields, actions(el("button", { type: "submit", class: "accept" }, "Accept")))
    form.addEventListener("submit", send(() => ({ action: "accept", content: content(form) })))
    card.append(form)
  }
  card.append(el("p", { class: "status" }))
  return card
}

const refreshQuestions = async () => {
  const { status, body } = await api("/v1/elicit")
  const box = $("questions")
  if (status !== 200) return void box.replaceChildren(el("p", { class: "empty" }, "Shown to the owner only."))
  const open = new Set(body.questions.map((q) => q.id))
  // A card stays as it is while its question is open, so what is typed into it is kept.
  for (const card of box.querySelectorAll(".question")) if (!open.has(card.dataset.id)) card.remove()
  const shown = new Set([...box.querySelectorAll(".question")].map((c) => c.dataset.id))
  for (const q of body.questions) if (!shown.has(q.id)) box.append(questionCard(q))
  box.querySelector(".empty")?.remove()
  if (open.size === 0) box.replaceChildren(el("p", { class: "empty" }, "None."))
}

// ------------------------------------------------------------------------------ tasks
const refreshTasks = async () => {
  const { status, body } = await api("/v1/tasks")
  const rows = status !== 200
    ? [el("tr", {}, el("td", { colspan: 5, class: "empty" }, "Shown to the owner only."))]
    : body.tasks.map((t) => el("tr", {},
      el("td", { class: "mono", title: t.taskId }, short(t.taskId)),
      el("td", { class: t.status }, t.status),
      el("td", {}, new Date(t.createdAt).toLocaleTimeString()),
      el("td", {}, new Date(t.lastUpdatedAt).toLocaleTimeString()),
      el("td", {}, t.statusMessage || (t.error ? t.error.message : ""))))
  $("tasks").tBodies[0].replaceChildren(...rows)
}

// ------------------------------------------------------------------------------ calls
const callRow = (c) => el("tr", { "data-seq": c.seq },
  el("td", {}, time(c.at)),
  el("td", { class: "mono" }, c.tool),
  el("td", {}, [c.via, c.client, c.revision, c.session && "session " + short(c.session)].filter(Boolean).join(" \u00b7 ")),
  el("td", {}, c.durationMs + " ms"),
  el("td", { class: c.outcome, title: c.error }, c.outcome))

/** Follows the calls as they end: each request waits for one newer than the last it saw. */
const followCalls = async () => {
  let last = -1
  for (;;) {
    const query = last < 0 ? "" : "?after=" + last + "&waitMs=20000"
    const { status, body } = await api("/v1/calls/recent" + query).catch(() => ({ status: 0 }))
    const rows = $("calls").tBodies[0]
    if (status === 403 || status === 401) return void rows.replaceChildren(el("tr", {}, el("td", { colspan: 5, class: "empty" }, "Shown to the owner only.")))
    if (status !== 200) {
      await new Promise((resolve) => setTimeout(resolve, 2000))
      continue
    }
    if (body.last < last) rows.replaceChildren()
    rows.prepend(...body.calls.map(callRow))
    while (rows.rows.length > 50) rows.lastElementChild.remove()
    last = body.last
  }
}

// ------------------------------------------------------------------------------ events
const showEvent = (type, data) => {
  const { at, server, ...rest } = data
  delete rest.type
  const detail = JSON.stringify(rest)
  const list = $("events")
  list.prepend(el("li", {}, time(at === undefined ? Date.now() : new Date(at)) + " " + type + (server ? " " + server : "") +
    (detail === "{}" ? "" : " " + detail.slice(0, 200))))
  while (list.children.length > 100) list.lastElementChild.remove()
  refresh()
}

/** /v1/events read with fetch (EventSource cannot send the Authorization header), frames parsed by hand. */
const followEvents = async () => {
  for (;;) {
    try {
      const response = await fetch("/v1/events", { headers: auth, cache: "no-store" })
      if (!response.ok) throw new Error("status " + response.status)
      $("stream").textContent = "live"
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
      let buffer = ""
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += value
        let end
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const type = /^event: (.*)$/m.exec(frame)
          const data = /^data: (.*)$/m.exec(frame)
          if (type && data) showEvent(type[1], JSON.parse(data[1]))
        }
      }
    } catch (e) {
      // Shown, then tried again: the daemon may be restarting.
    }
    $("stream").textContent = "reconnecting\u2026"
    await new Promise((resolve) => setTimeout(resolve, 2000))
  }
}

// ------------------------------------------------------------------------------ questions and tasks, live
/**
 * Waits for the owner's questions and tasks to change (/v1/ui/changes, a long poll naming the
 * version shown) and reads them only then. A visitor is refused it: the first refresh showed that.
 */
const followChanges = async () => {
  let version = ""
  for (;;) {
    const query = "?after=" + encodeURIComponent(version) + (version === "" ? "" : "&waitMs=20000")
    const { status, body } = await api("/v1/ui/changes" + query).catch(() => ({ status: 0 }))
    if (status === 403 || status === 401) return
    if (status !== 200) {
      await new Promise((resolve) => setTimeout(resolve, 2000))
      continue
    }
    if (body.version !== version) {
      version = body.version
      await refresh()
    }
  }
}

// ------------------------------------------------------------------------------ start
// A refresh asked for while one runs runs again after it, so no change is missed.
let busy = false
let again = false
const refresh = async () => {
  if (busy) return void (again = true)
  busy = true
  try {
    do {
      again = false
      await Promise.all([refreshServers(), refreshQuestions(), refreshTasks()])
    } while (again)
  } catch (e) {
    notice("The daemon did not answer: " + e.message)
  } finally {
    busy = false
  }
}

$("access").textContent = secret === undefined ? "visitor" : "owner"
$("access").title = secret === undefined
  ? "Questions, tasks and calls are the owner's: open the address that mcpx-fx ui prints."
  : "Opened with the owner secret."
refresh()
followChanges()
followCalls()
followEvents()
`
