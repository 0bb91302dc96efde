declare module 'color-name' {
  /** CSS colour keywords, each with its red, green and blue. */
  const names: Record<string, [number, number, number]>;
  export default names;
}
