// The colours boxes are told apart by, chosen to stay distinct for people with colour-vision
// deficiencies: every pair of colours within a set is at least ΔE 20 apart (CIELAB) in normal
// vision and under simulated deuteranopia and protanopia (Machado et al. 2009, severity 1), as
// tests/js/palette.test.mjs computes. Numbers on labels and dash patterns (suggestions, known
// answers) still say the same as the colour, so nothing rests on colour alone.

export const ERROR = "#ff4d4f"; // a box with an error
export const SUGGESTION = "#f8fafc"; // a model's suggestion (dashed)

/** One colour per change of an answer (change 1, 2, … in turn). */
export const CHANGE_PALETTE = ["#ffff33", "#ef6ca9", "#6cefa9", "#7e47eb", "#deff85", "#d991f3"];

/** The adjudication screen's layers: annotation 1, annotation 2, the known answer, what stands. */
export const LAYER_COLORS = { one: "#f8ff33", two: "#725cff", gold: "#eb4783", current: "#e291f3" };

/** A lead's merged answer: none of these passes for a layer's colour. */
export const MERGE_PALETTE = ["#ffeb85", "#85ffde", "#91f3a8", "#85fbff"];

/** Gold feedback: the annotator's boxes (solid) and the known answer (dashed). */
export const FEEDBACK_COLORS = { yours: "#0072b2", known: "#e69f00" };
