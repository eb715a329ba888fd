// The actions a screen answers to, by name: the kit's own (actions.js: modes, zoom, boxes,
// changes…) and those a screen registers (the workspace's submit, skip and layout; the
// adjudication screen's decisions). Keys and buttons run every action through run(), so a key
// and its button can never disagree, and the kit calls nothing a screen has not registered.

/**
 * canvas: the kit's actions (createActions). Returns the registry:
 * - register(actions): the screen's actions; one with the name of a kit action replaces it (the
 *   kit's stays callable as registry.canvas[name], so a screen can do more around it);
 * - guard(check): check(name) runs before every action, and false drops it (a screen whose
 *   edits wait for a mode, say);
 * - run(name, arg): the action's result, or undefined when no action has that name.
 */
export function createRegistry(canvas) {
  const table = new Map(Object.entries(canvas));
  let allowed = () => true;
  return {
    canvas: Object.freeze({ ...canvas }),
    register(actions) {
      for (const [name, fn] of Object.entries(actions)) table.set(name, fn);
    },
    guard(check) {
      allowed = check;
    },
    has: (name) => table.has(name),
    run(name, arg) {
      const action = table.get(name);
      if (!action || !allowed(name)) return undefined;
      return action(arg);
    },
  };
}
