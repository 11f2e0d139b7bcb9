// Just enough of a DOM for Agent Home's rendering code to run under node: elements with
// attributes, properties, children and listeners, and a serialisation to compare against.
// Text is kept as text; serialising escapes it, so markup in text shows as such.

class FakeNode {
  constructor() {
    /** @type {FakeNode[]} */
    this.childNodes = [];
    this.parentNode = null;
  }
  append(...children) {
    for (const child of children) {
      const node = typeof child === 'string' ? new FakeText(child) : child;
      if (node instanceof FakeFragment) {
        for (const inner of [...node.childNodes]) this.append(inner);
        node.childNodes = [];
        continue;
      }
      node.remove?.();
      node.parentNode = this;
      this.childNodes.push(node);
    }
  }
  appendChild(child) {
    this.append(child);
    return child;
  }
  remove() {
    if (!this.parentNode) return;
    const siblings = this.parentNode.childNodes;
    siblings.splice(siblings.indexOf(this), 1);
    this.parentNode = null;
  }
  get textContent() {
    return this.childNodes.map((child) => child.textContent).join('');
  }
  set textContent(text) {
    this.childNodes = [];
    if (text !== '') this.append(String(text));
  }
  get children() {
    return this.childNodes.filter((child) => child instanceof FakeElement);
  }
}

class FakeText extends FakeNode {
  constructor(text) {
    super();
    this.data = String(text);
  }
  get textContent() {
    return this.data;
  }
  set textContent(text) {
    this.data = String(text);
  }
  toHtml() {
    return escape(this.data);
  }
}

class FakeFragment extends FakeNode {
  toHtml() {
    return this.childNodes.map((child) => child.toHtml()).join('');
  }
}

const PROPERTIES = ['href', 'target', 'rel', 'title', 'type', 'id', 'value', 'className'];

class FakeElement extends FakeNode {
  constructor(tag) {
    super();
    this.tagName = tag.toUpperCase();
    this.localName = tag;
    /** @type {Map<string, string>} */
    this.attributes = new Map();
    this.dataset = {};
    this.style = { cssText: '' };
    this.listeners = {};
    this.checked = false;
    this.disabled = false;
    for (const name of PROPERTIES) {
      Object.defineProperty(this, name, {
        get: () => this.attributes.get(name === 'className' ? 'class' : name) ?? '',
        set: (value) => this.attributes.set(name === 'className' ? 'class' : name, String(value)),
      });
    }
  }
  setAttribute(name, value) {
    this.attributes.set(name, String(value));
  }
  getAttribute(name) {
    return this.attributes.get(name) ?? null;
  }
  addEventListener(type, listener) {
    (this.listeners[type] ??= []).push(listener);
  }
  /** Every descendant element, depth first. */
  descendants() {
    return this.children.flatMap((child) => [child, ...child.descendants()]);
  }
  toHtml() {
    const attributes = [...this.attributes].map(([name, value]) => ` ${name}="${escape(value)}"`);
    for (const [name, value] of Object.entries(this.dataset)) attributes.push(` data-${name}="${escape(value)}"`);
    if (this.checked) attributes.push(' checked');
    if (this.disabled) attributes.push(' disabled');
    const inner = this.childNodes.map((child) => child.toHtml()).join('');
    return `<${this.localName}${attributes.join('')}>${inner}</${this.localName}>`;
  }
}

function escape(text) {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Installs the fake `document` as a global (once) and returns it. */
export function installFakeDom() {
  if (!globalThis.document) {
    globalThis.document = {
      createElement: (tag) => new FakeElement(tag),
      createElementNS: (_namespace, tag) => new FakeElement(tag),
      createTextNode: (text) => new FakeText(text),
      createDocumentFragment: () => new FakeFragment(),
    };
  }
  return globalThis.document;
}

/** A rendered fragment or element as HTML text. */
export function html(node) {
  return node.toHtml();
}
