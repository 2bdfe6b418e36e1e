/** A dump's table names, schema-qualified ("public.users") or not ("users"). */

export function unqualified(name: string): string {
  return name.slice(name.lastIndexOf(".") + 1);
}

/** Whether a table is the one asked for: "public.users", or "users" in any schema. */
export function isNamed(name: string, asked: string): boolean {
  return name === asked || unqualified(name) === asked;
}
