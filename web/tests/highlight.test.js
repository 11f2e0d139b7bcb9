// Code highlighting splits code into tokens without losing or reordering a character,
// and marks comments, strings, numbers and keywords by language.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tokenize, familyOf } from '../public/assets/highlight.js';

const kinds = (tokens, kind) => tokens.filter(([k]) => k === kind).map(([, text]) => text);

test('joining the tokens gives the code back, for every language and for odd input', () => {
  const samples = [
    ['rust', "fn main() {\n    let s = \"a \\\" b\"; // note\n    let x: &'a str = 'c';\n}\n"],
    ['python', "def f(x):\n    # comment\n    return 'it''s' + \"x\" * 10\n"],
    ['js', 'const a = `tpl ${b}`; /* block\n comment */ let n = 1.5e3;'],
    ['sql', "SELECT * FROM t WHERE name = 'o''brien' -- trailing"],
    ['bash', 'echo "unterminated\nnext line # not a comment in a string'],
    ['go', '/* never closed'],
    ['unknown', 'anything <b>at all</b>'],
    ['rust', ''],
  ];
  for (const [language, code] of samples) {
    const tokens = tokenize(code, language);
    assert.equal(tokens.map(([, text]) => text).join(''), code, `${language}: ${code}`);
  }
});

test('comments, strings, numbers and keywords are told apart', () => {
  const tokens = tokenize('let count = 42; // the answer\nlet name = "forty two";', 'rust');
  assert.deepEqual(kinds(tokens, 'keyword'), ['let', 'let']);
  assert.deepEqual(kinds(tokens, 'number'), ['42']);
  assert.deepEqual(kinds(tokens, 'comment'), ['// the answer']);
  assert.deepEqual(kinds(tokens, 'string'), ['"forty two"']);
});

test('a word is a keyword only in its own language, and digits inside names are not numbers', () => {
  assert.deepEqual(kinds(tokenize('def lambda2 = 3', 'python'), 'keyword'), ['def']);
  assert.deepEqual(kinds(tokenize('def lambda2 = 3', 'python'), 'number'), ['3']);
  assert.deepEqual(kinds(tokenize('def x', 'rust'), 'keyword'), []);
  assert.deepEqual(kinds(tokenize('select 1 FROM t', 'sql'), 'keyword'), ['select', 'FROM']);
});

test('a Rust lifetime does not start a string that swallows the line', () => {
  const tokens = tokenize("fn f<'a>(x: &'a str) -> u8 { 1 }", 'rs');
  assert.deepEqual(kinds(tokens, 'keyword'), ['fn']);
  assert.deepEqual(kinds(tokens, 'number'), ['1']);
});

test('languages are recognised by their usual fence names, in any case', () => {
  assert.equal(familyOf('TypeScript'), 'js');
  assert.equal(familyOf('sh'), 'shell');
  assert.equal(familyOf('py'), 'python');
  assert.equal(familyOf('brainfuck'), undefined);
  assert.deepEqual(tokenize('x = 1', 'brainfuck'), [['plain', 'x = 1']]);
});
