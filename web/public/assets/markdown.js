// @ts-check
// Markdown to DOM nodes: headings, paragraphs, lists, quotes, fenced code, GFM tables,
// rules, emphasis, inline code and links. Nothing is parsed as HTML: text only ever
// becomes text nodes, and links keep only http(s) and mailto targets, opening outside
// the page.

import { copyButton } from './clipboard.js';
import { highlightInto } from './highlight.js';

/**
 * A fenced code block: the language named above it, a copy button, the code highlighted.
 * @param {string} text
 * @param {string} language
 * @returns {HTMLElement}
 */
function codeBlock(text, language) {
  const pre = document.createElement('pre');
  const code = document.createElement('code');
  if (language) code.dataset.language = language;
  highlightInto(code, text, language);
  pre.append(code);
  const label = document.createElement('span');
  label.className = 'code-language';
  label.textContent = language || 'text';
  const header = document.createElement('div');
  header.className = 'code-header';
  header.append(label, copyButton(`Copy the ${language || 'text'} code`, () => text));
  const block = document.createElement('div');
  block.className = 'code-block';
  block.append(header, pre);
  return block;
}

/**
 * @param {string} source
 * @returns {DocumentFragment}
 */
export function renderMarkdown(source) {
  const fragment = document.createDocumentFragment();
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  let index = 0;
  /** @type {string[]} */
  let paragraph = [];
  const flush = () => {
    if (paragraph.length) {
      const p = document.createElement('p');
      inline(p, paragraph.join('\n'));
      fragment.append(p);
      paragraph = [];
    }
  };
  while (index < lines.length) {
    const line = lines[index];
    const fence = /^\s*(```+|~~~+)\s*([\w+-]*)/.exec(line);
    if (fence) {
      flush();
      const marker = fence[1];
      const body = [];
      index++;
      while (index < lines.length && !lines[index].trimStart().startsWith(marker)) {
        body.push(lines[index]);
        index++;
      }
      index++;
      fragment.append(codeBlock(body.join('\n'), fence[2]));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      const level = Math.min(heading[1].length + 2, 6);
      const h = document.createElement(`h${level}`);
      inline(h, heading[2].replace(/\s#+\s*$/, ''));
      fragment.append(h);
      index++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      fragment.append(document.createElement('hr'));
      index++;
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush();
      const quoted = [];
      while (index < lines.length && /^\s*>/.test(lines[index])) {
        quoted.push(lines[index].replace(/^\s*>\s?/, ''));
        index++;
      }
      const blockquote = document.createElement('blockquote');
      blockquote.append(renderMarkdown(quoted.join('\n')));
      fragment.append(blockquote);
      continue;
    }
    if (isTableStart(lines, index)) {
      flush();
      index = table(fragment, lines, index);
      continue;
    }
    const item = /^(\s*)([-*+]|\d+[.)])\s+/.exec(line);
    if (item) {
      flush();
      index = list(fragment, lines, index);
      continue;
    }
    if (!line.trim()) {
      flush();
      index++;
      continue;
    }
    paragraph.push(line);
    index++;
  }
  flush();
  return fragment;
}

/**
 * @param {string[]} lines
 * @param {number} index
 */
function isTableStart(lines, index) {
  return (
    index + 1 < lines.length &&
    lines[index].includes('|') &&
    /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(lines[index + 1])
  );
}

/** @param {string} line */
function cells(line) {
  let text = line.trim();
  if (text.startsWith('|')) text = text.slice(1);
  if (text.endsWith('|') && !text.endsWith('\\|')) text = text.slice(0, -1);
  return text.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

/**
 * @param {DocumentFragment} fragment
 * @param {string[]} lines
 * @param {number} index
 */
function table(fragment, lines, index) {
  const wrap = document.createElement('div');
  wrap.className = 'table-wrap';
  const element = document.createElement('table');
  const aligns = cells(lines[index + 1]).map((cell) =>
    cell.startsWith(':') && cell.endsWith(':') ? 'center' : cell.endsWith(':') ? 'right' : '',
  );
  const head = document.createElement('thead');
  const headRow = document.createElement('tr');
  cells(lines[index]).forEach((cell, column) => {
    const th = document.createElement('th');
    if (aligns[column]) th.style.textAlign = aligns[column];
    inline(th, cell);
    headRow.append(th);
  });
  head.append(headRow);
  element.append(head);
  const body = document.createElement('tbody');
  index += 2;
  while (index < lines.length && lines[index].includes('|') && lines[index].trim()) {
    const row = document.createElement('tr');
    cells(lines[index]).forEach((cell, column) => {
      const td = document.createElement('td');
      if (aligns[column]) td.style.textAlign = aligns[column];
      inline(td, cell);
      row.append(td);
    });
    body.append(row);
    index++;
  }
  element.append(body);
  wrap.append(element);
  fragment.append(wrap);
  return index;
}

/**
 * @param {DocumentFragment | HTMLElement} parent
 * @param {string[]} lines
 * @param {number} index
 */
function list(parent, lines, index) {
  const first = /^(\s*)([-*+]|\d+[.)])\s+/.exec(lines[index]);
  if (!first) return index + 1;
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const element = document.createElement(ordered ? 'ol' : 'ul');
  if (ordered) {
    const start = parseInt(first[2], 10);
    if (start !== 1) element.setAttribute('start', String(start));
  }
  /** @type {HTMLLIElement | null} */
  let current = null;
  while (index < lines.length) {
    const line = lines[index];
    const item = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (item && item[1].length === indent) {
      current = document.createElement('li');
      const task = /^\[([ xX])\]\s+(.*)$/.exec(item[3]);
      if (task) {
        const box = document.createElement('input');
        box.type = 'checkbox';
        box.disabled = true;
        box.checked = task[1] !== ' ';
        // The item's text labels its box.
        const label = document.createElement('label');
        label.className = 'task';
        label.append(box, ' ');
        inline(label, task[2]);
        current.append(label);
      } else {
        inline(current, item[3]);
      }
      element.append(current);
      index++;
    } else if (item && item[1].length > indent && current) {
      const nested = document.createDocumentFragment();
      index = list(nested, lines, index);
      current.append(nested);
    } else if (line.trim() && /^\s+/.test(line) && current) {
      current.append(document.createElement('br'));
      inline(current, line.trim());
      index++;
    } else {
      break;
    }
  }
  parent.append(element);
  return index;
}

const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([\s\S]+?)\*\*|__([\s\S]+?)__|\*([^*\s][\s\S]*?)\*|_([^_\s][\s\S]*?)_(?!\w)|~~([\s\S]+?)~~|\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/;

/**
 * Appends inline Markdown as nodes.
 * @param {HTMLElement} parent
 * @param {string} text
 */
export function inline(parent, text) {
  while (text) {
    const match = INLINE.exec(text);
    if (!match) {
      appendText(parent, text);
      return;
    }
    if (match.index > 0) appendText(parent, text.slice(0, match.index));
    if (match[1]) {
      const code = document.createElement('code');
      code.textContent = match[2].replace(/^ (.*) $/, '$1');
      parent.append(code);
    } else if (match[3] !== undefined || match[4] !== undefined) {
      const strong = document.createElement('strong');
      inline(strong, match[3] ?? match[4]);
      parent.append(strong);
    } else if (match[5] !== undefined || match[6] !== undefined) {
      const em = document.createElement('em');
      inline(em, match[5] ?? match[6]);
      parent.append(em);
    } else if (match[7] !== undefined) {
      const del = document.createElement('del');
      inline(del, match[7]);
      parent.append(del);
    } else if (match[8] !== undefined) {
      parent.append(link(match[9], match[8]));
    } else if (match[10] !== undefined) {
      parent.append(link(match[10], match[10]));
    }
    text = text.slice(match.index + match[0].length);
  }
}

/**
 * @param {HTMLElement} parent
 * @param {string} text
 */
function appendText(parent, text) {
  const pieces = text.split('\n');
  pieces.forEach((piece, index) => {
    if (index > 0) parent.append(document.createElement('br'));
    if (piece) parent.append(document.createTextNode(piece));
  });
}

/**
 * A link that opens outside the page, or plain text when its target is not http(s)
 * or mailto.
 * @param {string} target
 * @param {string} label
 */
function link(target, label) {
  let url;
  try {
    url = new URL(target);
  } catch {
    return document.createTextNode(label);
  }
  if (!['http:', 'https:', 'mailto:'].includes(url.protocol)) {
    return document.createTextNode(label);
  }
  const a = document.createElement('a');
  a.href = url.href;
  a.target = '_blank';
  a.rel = 'noopener noreferrer';
  a.textContent = label;
  a.title = url.href;
  return a;
}
