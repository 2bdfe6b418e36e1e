/**
 * JSON.parse that keeps integers past 2^53 exact: any integer literal of 16 or more digits outside a string
 * becomes a string of its digits before parsing (X's ids are up to 19 digits; a JS number would lose the last
 * ones). Smaller numbers (counts) stay numbers.
 */
export function parseLossless(text: string): unknown {
  let out = "";
  let last = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const match = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
      if (!match) continue;
      const token = match[0];
      if (match[1] === undefined && match[2] === undefined && token.replace("-", "").length >= 16) {
        out += `${text.slice(last, i)}"${token}"`;
        last = i + token.length;
      }
      i += token.length - 1;
    }
  }
  return JSON.parse(last === 0 ? text : out + text.slice(last));
}
