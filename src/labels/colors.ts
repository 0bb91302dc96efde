/**
 * Label colours as GitLab reads and shows them: `#RGB`, `#RRGGBB` or a CSS colour name, and the text
 * colour that stays readable on each.
 */
import cssColors from 'color-name';

/** GitLab's colour when none is given. */
export const DEFAULT_COLOR = '#6699cc';
export const LIGHT_TEXT = '#FFFFFF';
export const DARK_TEXT = '#1F1E24';

const HEX = /^#(?:[0-9A-Fa-f]{3}){1,2}$/;
/** GitLab knows the CSS keywords except the `cyan` and `magenta` aliases (`aqua`, `fuchsia` are there). */
const UNKNOWN_NAMES = new Set(['cyan', 'magenta']);

const hex2 = (n: number) => n.toString(16).padStart(2, '0').toUpperCase();

/**
 * The colour to store for `input`: its hex as given, a name's hex value, `DEFAULT_COLOR` when blank, or
 * undefined when it is no colour.
 */
export function parseColor(input: string): string | undefined {
  const value = input.trim();
  if (value === '') return DEFAULT_COLOR;
  if (HEX.test(value)) return value;
  const name = value.toLowerCase();
  const rgb = UNKNOWN_NAMES.has(name) ? undefined : cssColors[name];
  return rgb ? `#${rgb.map(hex2).join('')}` : undefined;
}

function channels(color: string): [number, number, number] {
  const digits = color.slice(1);
  const pairs = digits.length === 3 ? [...digits].map((d) => d + d) : digits.match(/../g)!;
  return pairs.map((pair) => parseInt(pair, 16)) as [number, number, number];
}

/** WCAG 2.1 relative luminance of an sRGB colour. */
function luminance([r, g, b]: [number, number, number]): number {
  const linear = (c: number) => {
    const v = c / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

const WHITE = luminance([255, 255, 255]);
const DARK = luminance([0x1f, 0x1e, 0x24]);

/**
 * The text colour for a label: dark on a light colour, white otherwise. White wins unless its contrast
 * is under 2.4 and the dark text's is higher, GitLab's threshold for mid tones.
 */
export function textColorFor(color: string): string {
  if (!HEX.test(color)) return LIGHT_TEXT;
  const own = luminance(channels(color));
  const againstWhite = (WHITE + 0.05) / (own + 0.05);
  const againstDark = (own + 0.05) / (DARK + 0.05);
  return againstWhite >= 2.4 || againstWhite > againstDark ? LIGHT_TEXT : DARK_TEXT;
}
