// Unit tests of the formatting and trace functions (no DOM): node --test test/
import assert from 'node:assert/strict';
import test from 'node:test';
import { formatSeconds, isErrorEvent, parseEmbedded, parsePython, prettyLines, previewText, summarize, usageOf,
  verdictOf } from '../src/format.js';
import { buildRoute, parseRoute, withParams } from '../src/lib/route.js';
import { barOf, filterOf, matchesFilter, screenshotUrl, timeWindow, toggleType, visibleRange } from '../src/lib/trace.js';

test('formatSeconds', () => {
  assert.equal(formatSeconds(null), '–');
  assert.equal(formatSeconds(0.0005), '500µs');
  assert.equal(formatSeconds(0.25), '250ms');
  assert.equal(formatSeconds(2.5), '2.50s');
  assert.equal(formatSeconds(125), '2m 5s');
});

test('previewText shows text values first', () => {
  assert.equal(previewText({ exit_code: 0, command: 'ls -la' }), 'command: ls -la · exit_code: 0');
  assert.equal(previewText({ content: 'a\n  b' }), 'content: a b');
  assert.equal(previewText({ content: 'x'.repeat(500) }, 10), 'content: x…');
});

test('Python literals and JSON inside strings are parsed', () => {
  assert.deepEqual(parsePython("['{\"a\": 1}', None, True, (1, 2.5)]"), ['{"a": 1}', null, true, [1, 2.5]]);
  assert.deepEqual(parsePython("{'k': 'it\\'s\\nok'}"), { k: "it's\nok" });
  assert.equal(parsePython('not python'), undefined);
  assert.deepEqual(parseEmbedded('{"a": [1, 2]}'), { a: [1, 2] });
  assert.equal(parseEmbedded('hello'), undefined);
  assert.equal(parseEmbedded('[unclosed'), undefined);
});

test('prettyLines indents nested and embedded values without rewording', () => {
  const text = prettyLines({ output: "['{\"content\": \"hi\"}']", n: 1, lines: 'a\nb' });
  assert.equal(text, 'output:\n  - [0]\n    content: hi\nn: 1\nlines: |\n  a\n  b');
});

test('errors, usage, verdicts and summaries', () => {
  assert.ok(isErrorEvent({ type: 'error', payload: {} }));
  assert.ok(isErrorEvent({ type: 'command', payload: { exit_code: 2 } }));
  assert.ok(!isErrorEvent({ type: 'status', payload: { error: '' } }));
  assert.deepEqual(usageOf({ type: 'usage', payload: { input_tokens: 10, output_tokens: 5, cost_usd: 0.5 } }),
    { input: 10, output: 5, total: 15, cost: 0.5 });
  const attempt = { state: 'finished', outcome: 'completed', score: { state: 'scored', rewards: { reward: 0 } },
    verdict: 'failed', start_time: '2026-01-01T00:00:00Z', end_time: '2026-01-01T00:00:02Z' };
  assert.equal(verdictOf(attempt), 'failed');
  // The store's verdict, as sent: a reward of 1 outside the range the store reads is not a pass here.
  assert.equal(verdictOf({ ...attempt, score: { state: 'scored', rewards: { reward: 1 } }, verdict: 'errored' }), 'errored');
  assert.equal(verdictOf({ ...attempt, verdict: 'passed' }), 'passed');
  assert.equal(verdictOf({ ...attempt, state: 'running', verdict: '' }), 'running');
  assert.equal(verdictOf({ ...attempt, verdict: undefined }), 'errored');
  const s = summarize(attempt, [{ type: 'tool_call', name: 'bash', payload: {} }, { type: 'error', payload: {} },
    { type: 'usage', payload: { total_tokens: 7, cost_usd: 0.01 } }]);
  assert.equal(s.wall, 2);
  assert.equal(s.toolCalls, 1);
  assert.equal(s.errors, 1);
  assert.equal(s.tokens, 7);
  assert.deepEqual(s.tools, { bash: 1 });
});

test('an attempt\'s filters round-trip through the URL', () => {
  const route = parseRoute('#/attempts/a-0123?type=command,error&q=foo&errors=1&event=3');
  assert.equal(route.view, 'attempt');
  assert.equal(route.id, 'a-0123');
  assert.deepEqual(filterOf(route.params), { types: ['command', 'error'], text: 'foo', errorsOnly: true });
  assert.equal(buildRoute(route), '#/attempts/a-0123?errors=1&event=3&q=foo&type=command%2Cerror');
  assert.deepEqual(parseRoute(buildRoute(route)), route);
  assert.equal(buildRoute(withParams(route, { q: '', errors: '', type: '', event: '' })), '#/attempts/a-0123');
  assert.equal(parseRoute('').view, 'runs');
  assert.equal(parseRoute('#/runs/my%20label').id, 'my label');
  assert.deepEqual(toggleType(['a'], 'b'), ['a', 'b']);
  assert.deepEqual(toggleType(['a', 'b'], 'a'), ['b']);
});

test('filtering and the zoomed time window', () => {
  const events = [
    { seq: 1, type: 'status', name: 'start', offset: 0.1, duration: 0.1, payload: {} },
    { seq: 2, type: 'command', name: 'ls', offset: 2, duration: 1, payload: { exit_code: 1 } },
    { seq: 3, type: 'output', name: 'out', offset: 3, duration: 0, payload: { text: 'Hello' } },
  ];
  const f = (params) => events.filter((e) => matchesFilter(e, filterOf(params), isErrorEvent)).map((e) => e.seq);
  assert.deepEqual(f({ type: 'command,output' }), [2, 3]);
  assert.deepEqual(f({ q: 'hello' }), [3]);
  assert.deepEqual(f({ errors: '1' }), [2]);
  assert.deepEqual(timeWindow(events, 10, false), [0, 10]);
  assert.deepEqual(timeWindow(events.slice(1), 10, true), [1, 3]);
  const bar = barOf(events[1], [1, 3]);
  assert.equal(bar.left, 0);
  assert.equal(bar.width, 0.5);
  assert.deepEqual(visibleRange(260, 260, 26, 1_000_000, 0), [10, 20]);
  assert.deepEqual(visibleRange(0, 260, 26, 5, 10), [0, 5]);
});

test('screenshotUrl: a .png artifact path as the gateway image URL, nothing else', () => {
  const shot = { payload: { screenshot: '/logs/agent/screenshots/0001.png' } };
  assert.equal(screenshotUrl('a-1', shot), '/api/attempts/a-1/images/logs/agent/screenshots/0001.png');
  assert.equal(screenshotUrl('a-1', { payload: { screenshot: '/logs/a b#.png' } }), '/api/attempts/a-1/images/logs/a%20b%23.png');
  for (const bad of ['/logs/agent/x.svg', 'logs/x.png', '/logs/../etc/x.png', '/logs//x.png', 42, null]) {
    assert.equal(screenshotUrl('a-1', { payload: { screenshot: bad } }), null, String(bad));
  }
  assert.equal(screenshotUrl('a-1', { payload: 'text' }), null);
});
