// Markdown renders to elements and text, never to markup from the source: headings,
// lists, tasks, quotes, tables, code blocks (highlighted, with their language and a copy
// button), emphasis and links that keep only safe targets.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installFakeDom, html } from './fake_dom.js';

installFakeDom();
const { renderMarkdown } = await import('../public/assets/markdown.js');

const render = (source) => renderMarkdown(source);
const elements = (fragment) => fragment.childNodes.flatMap((node) => (node.descendants ? [node, ...node.descendants()] : []));
const tags = (fragment, tag) => elements(fragment).filter((node) => node.localName === tag);

test('markup in the source stays text', () => {
  const out = render('Hello <img src=x onerror=alert(1)> & <script>bad()</script>');
  assert.equal(tags(out, 'img').length, 0);
  assert.equal(tags(out, 'script').length, 0);
  assert.match(html(out), /&lt;img src=x onerror=alert\(1\)&gt; &amp; &lt;script&gt;/);
});

test('headings start below the page title, lists and quotes nest their text', () => {
  const out = render('# Title\n\n- one\n- **two**\n\n1. first\n2. second\n\n> quoted *words*');
  assert.equal(tags(out, 'h3')[0].textContent, 'Title');
  assert.deepEqual(tags(out, 'li').map((li) => li.textContent), ['one', 'two', 'first', 'second']);
  assert.equal(tags(out, 'strong')[0].textContent, 'two');
  assert.equal(tags(out, 'blockquote')[0].textContent.trim(), 'quoted words');
  assert.equal(tags(out, 'em')[0].textContent, 'words');
});

test('a fenced block keeps its code exactly, names its language and offers a copy button', () => {
  const code = 'fn main() {\n    println!("<hi>");\n}';
  const out = render(`Before\n\n\`\`\`rust\n${code}\n\`\`\`\n\nAfter`);
  const block = tags(out, 'code').find((node) => node.dataset.language === 'rust');
  assert.ok(block, 'the code element names its language');
  assert.equal(block.textContent, code);
  assert.deepEqual(block.children.filter((span) => span.className === 'tok-keyword').map((span) => span.textContent), ['fn']);
  assert.equal(tags(out, 'span').find((span) => span.className === 'code-language').textContent, 'rust');
  const copy = tags(out, 'button').find((button) => button.getAttribute('aria-label') === 'Copy the rust code');
  assert.ok(copy, 'a copy button names what it copies');
  assert.equal(tags(out, 'p').map((p) => p.textContent).join('|'), 'Before|After');
});

test('an unclosed fence runs to the end, and a block without a language is plain text', () => {
  const out = render('```\nno language <b>\nstill code');
  const block = tags(out, 'code')[0];
  assert.equal(block.textContent, 'no language <b>\nstill code');
  assert.equal(block.children.length, 0);
});

test('links keep only http, https and mailto targets and open outside the page', () => {
  const out = render('[ok](https://example.org/a) [mail](mailto:a@b.c) [bad](javascript:alert(1)) [data](data:text/html,x)');
  const links = tags(out, 'a');
  assert.deepEqual(links.map((a) => a.href), ['https://example.org/a', 'mailto:a@b.c']);
  assert.ok(links.every((a) => a.target === '_blank' && a.rel.includes('noopener')));
  assert.match(out.textContent, /bad/);
});

test('a GFM table and task items render with their cells and states', () => {
  const out = render('| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n- [ ] open');
  assert.deepEqual(tags(out, 'th').map((cell) => cell.textContent), ['a', 'b']);
  assert.deepEqual(tags(out, 'td').map((cell) => cell.textContent), ['1', '2']);
  const boxes = tags(out, 'input');
  assert.deepEqual(boxes.map((box) => box.checked), [true, false]);
  assert.ok(boxes.every((box) => box.disabled));
});

test('inline code keeps its content literally', () => {
  const out = render('Use `a *b* <c>` here');
  assert.equal(tags(out, 'code')[0].textContent, 'a *b* <c>');
  assert.equal(tags(out, 'em').length, 0);
});
