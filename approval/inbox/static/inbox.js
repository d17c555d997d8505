// Reloads the inbox when the approvals change (server-sent events from
// /events). Without JavaScript the page refreshes itself every 10 s.
"use strict";
if (window.EventSource) {
  const events = new EventSource("/events");
  events.addEventListener("changed", () => window.location.reload());
}
