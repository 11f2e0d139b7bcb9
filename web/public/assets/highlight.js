// @ts-check
// Code highlighting for fenced blocks: a small tokenizer (comments, strings, numbers,
// keywords) per language family. Tokens become text inside <span>s: nothing is ever
// parsed as HTML. An unknown language is left plain.

/** Keywords by language family. */
const KEYWORDS = {
  c: 'auto break case char const continue default do double else enum extern float for goto if int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class namespace template typename public private protected virtual new delete this true false nullptr using',
  rust: 'as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while',
  js: 'async await break case catch class const continue debugger default delete do else export extends false finally for from function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while yield interface type implements enum readonly',
  python: 'and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield',
  go: 'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var true false nil',
  shell: 'if then else elif fi case esac for while until do done in function return export local readonly echo cd exit set unset',
  sql: 'select from where insert into values update set delete create table index view drop alter add primary key foreign references join inner left right outer on group by order having limit offset as and or not null is in like distinct union all begin commit rollback',
  java: 'abstract boolean break byte case catch char class const continue default do double else enum extends final finally float for if implements import instanceof int interface long new null package private protected public return short static super switch this throw throws true false try void while var',
  ruby: 'alias and begin break case class def defined do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield require',
};

/** Language names (as written after the fence) to their family. */
const FAMILIES = {
  c: 'c', h: 'c', cpp: 'c', 'c++': 'c', cc: 'c', cs: 'c', csharp: 'c',
  rust: 'rust', rs: 'rust',
  js: 'js', javascript: 'js', jsx: 'js', ts: 'js', typescript: 'js', tsx: 'js', mjs: 'js', json: 'js',
  python: 'python', py: 'python',
  go: 'go', golang: 'go',
  sh: 'shell', bash: 'shell', shell: 'shell', zsh: 'shell', console: 'shell',
  sql: 'sql',
  java: 'java', kotlin: 'java', kt: 'java', scala: 'java', swift: 'java',
  ruby: 'ruby', rb: 'ruby',
  toml: 'shell', yaml: 'shell', yml: 'shell', ini: 'shell',
};

/** How each family writes comments. */
const COMMENTS = {
  c: ['//', '/*'], rust: ['//', '/*'], js: ['//', '/*'], go: ['//', '/*'], java: ['//', '/*'],
  python: ['#'], shell: ['#'], ruby: ['#'], sql: ['--', '/*'],
};

/** @type {Map<string, Set<string>>} */
const keywordSets = new Map();

/**
 * The family of a fence's language, if Hearth highlights it.
 * @param {string} language
 * @returns {keyof typeof KEYWORDS | undefined}
 */
export function familyOf(language) {
  return /** @type {Record<string, keyof typeof KEYWORDS>} */ (FAMILIES)[language.toLowerCase()];
}

/**
 * Splits code into tokens: `[kind, text]`, kind one of `plain`, `comment`, `string`,
 * `number`, `keyword`. Joining the texts gives the code back unchanged.
 * @param {string} code
 * @param {string} language
 * @returns {Array<[string, string]>}
 */
export function tokenize(code, language) {
  const family = familyOf(language);
  if (!family) return [['plain', code]];
  let words = keywordSets.get(family);
  if (!words) {
    words = new Set(KEYWORDS[family].split(' '));
    keywordSets.set(family, words);
  }
  const comments = COMMENTS[family];
  /** @type {Array<[string, string]>} */
  const tokens = [];
  let plain = '';
  let index = 0;
  const push = (/** @type {string} */ kind, /** @type {string} */ text) => {
    if (plain) tokens.push(['plain', plain]);
    plain = '';
    tokens.push([kind, text]);
    index += text.length;
  };
  while (index < code.length) {
    const rest = code.slice(index, index + 2);
    const lineComment = comments.find((start) => start !== '/*' && code.startsWith(start, index));
    if (lineComment) {
      const end = code.indexOf('\n', index);
      push('comment', code.slice(index, end < 0 ? code.length : end));
      continue;
    }
    if (rest === '/*' && comments.includes('/*')) {
      const end = code.indexOf('*/', index + 2);
      push('comment', code.slice(index, end < 0 ? code.length : end + 2));
      continue;
    }
    const char = code[index];
    if (char === '"' || char === "'" || (char === '`' && family === 'js')) {
      push('string', stringAt(code, index, char, family));
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(code.slice(index, index + 64));
    if (word) {
      const text = word[0];
      const keyword = words.has(family === 'sql' ? text.toLowerCase() : text);
      if (keyword) push('keyword', text);
      else {
        plain += text;
        index += text.length;
      }
      continue;
    }
    const number = /^\d[\d_]*(\.\d+)?([eE][+-]?\d+)?/.exec(code.slice(index, index + 64));
    if (number && !/[A-Za-z0-9_]/.test(code[index - 1] ?? '')) {
      push('number', number[0]);
      continue;
    }
    plain += char;
    index += 1;
  }
  if (plain) tokens.push(['plain', plain]);
  return tokens;
}

/**
 * The string literal starting at `start`: up to its closing quote (escapes skipped), or
 * to the line's end when it is not closed (a Rust lifetime, an apostrophe in prose).
 * @param {string} code
 * @param {number} start
 * @param {string} quote
 * @param {string} family
 */
function stringAt(code, start, quote, family) {
  let index = start + 1;
  while (index < code.length) {
    const char = code[index];
    if (char === '\\') {
      index += 2;
      continue;
    }
    if (char === quote) return code.slice(start, index + 1);
    if (char === '\n' && quote !== '`') break;
    index += 1;
  }
  // A lone quote (a Rust lifetime `'a`) is one character, not the rest of the line.
  if (quote === "'" && family === 'rust') return quote;
  return code.slice(start, index);
}

/**
 * Fills a <code> element with the highlighted code.
 * @param {HTMLElement} element
 * @param {string} code
 * @param {string} language
 */
export function highlightInto(element, code, language) {
  const tokens = tokenize(code, language);
  if (tokens.length === 1 && tokens[0][0] === 'plain') {
    element.textContent = code;
    return;
  }
  for (const [kind, text] of tokens) {
    if (kind === 'plain') {
      element.append(document.createTextNode(text));
    } else {
      const span = document.createElement('span');
      span.className = `tok-${kind}`;
      span.textContent = text;
      element.append(span);
    }
  }
}
