import assert from 'node:assert/strict';
import test from 'node:test';
import { hasMath, splitMath } from '../src/lib/math.js';

test('math between the four delimiters; prices and shell variables stay text', () => {
  assert.deepEqual(splitMath('Let $x^2$ be \\(y\\) and $$\\frac{a}{b}$$ or \\[z\\].'), [
    { text: 'Let ' }, { math: 'x^2', display: false, source: '$x^2$' }, { text: ' be ' },
    { math: 'y', display: false, source: '\\(y\\)' }, { text: ' and ' },
    { math: '\\frac{a}{b}', display: true, source: '$$\\frac{a}{b}$$' }, { text: ' or ' },
    { math: 'z', display: true, source: '\\[z\\]' }, { text: '.' }]);
  assert.equal(hasMath('It costs $5 and $10 today'), false);
  assert.equal(hasMath('echo $HOME and $PATH'), false);
  assert.equal(hasMath('a \\$ sign and another \\$'), false);
  assert.equal(hasMath('$a\nb$'), false);
  assert.equal(hasMath('no math'), false);
  assert.equal(hasMath(null), false);
});
