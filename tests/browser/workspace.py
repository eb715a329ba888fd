"""Driving the annotation workspace in a browser: log-in, leasing, the screen geometry of a panel,
mouse drags, the answer panel, and pairs made of images big enough to draw on."""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass

import numpy as np
from PIL import ExifTags, Image, ImageOps
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from annotator.models import Pair
from annotator.services import PairInput, pair_create
from projects.models import Project
from tests.conftest import PASSWORD
from tests.images import encode, photo

SIZE = (320, 240)  # A's frame in most tests: a photo crop big enough to draw on comfortably


def _offset(project: Project) -> int:
    """Where the photo crop starts: distinct pairs within a test, the same whatever ran before."""
    return (project.pairs.count() * 37 + 11) % 200


def make_pair(project: Project, *, size_b: tuple[int, int] = SIZE) -> Pair:
    """A 320×240 photo crop and its edit (a recoloured square); B resized to `size_b`."""
    a = photo(size=SIZE, offset=_offset(project))
    b = np.asarray(a).copy()
    b[40:100, 60:140] = b[40:100, 60:140][..., ::-1]
    b_image = Image.fromarray(b)
    if size_b != SIZE:
        b_image = b_image.resize(size_b)
    return pair_create(project=project, pair_input=PairInput(encode(a), encode(b_image)))


def js_round(value: float) -> int:
    """Math.round: halves go up (Python's round() goes to the even neighbour)."""
    return math.floor(value + 0.5)


# -- pages ------------------------------------------------------------------------------------


def log_in(page: Page, username: str) -> None:
    page.goto("/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()


def start_annotating(page: Page, button: str = "Start annotating") -> dict:
    """Press the home page's start (or resume) button; returns the workspace's config."""
    page.goto("/")
    page.get_by_role("button", name=button).click()
    return wait_for_workspace(page)


def wait_for_workspace(page: Page, *, not_assignment: int | None = None) -> dict:
    """The mounted workspace (another assignment's, when given) with both images decoded."""
    page.wait_for_function(
        """old => {
          const root = document.querySelector('[data-workspace][data-ready]');
          return root && root.dataset.assignment !== String(old)
            && [...root.querySelectorAll('img[data-source]')]
              .every(i => i.complete && i.naturalWidth);
        }""",
        arg=not_assignment,
    )
    return json.loads(page.locator("#ws-config").text_content() or "")


def answer(page: Page) -> dict:
    """The answer as the page holds it: the hidden textarea autosave and submit read."""
    return json.loads(page.locator("textarea[name=answer]").input_value())


def change_card(page: Page, index: int) -> Locator:
    return page.locator("[data-change-list] .ws-change").nth(index)


def describe_change(
    page: Page, index: int, *, category: str, description: str, entity_a="", entity_b=""
) -> None:
    """Fill a change's card as a person does, then give the keyboard back to the images (Esc)."""
    card = change_card(page, index)
    card.locator("[data-input=category]").select_option(category)
    card.locator("[data-input=description]").fill(description)
    for side, entity in (("a", entity_a), ("b", entity_b)):
        if entity:
            card.locator(f"[data-input=entity_{side}]").fill(entity)
    page.keyboard.press("Escape")
    expect(page.locator("[data-stage]")).to_be_focused()


def wait_for_saved_draft(page: Page, assignment: int) -> None:
    """Until the server holds the latest edit: the page drops its own copy of the draft only
    when a save of the newest revision succeeded ("saved" alone may be an older revision's)."""
    page.wait_for_function(
        """id => document.querySelector('[data-save-status]').dataset.state === 'saved'
          && localStorage.getItem(`diffmark:draft:${id}`) === null""",
        arg=assignment,
    )


def submit(page: Page) -> None:
    page.keyboard.press("Control+Enter")


# -- geometry ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Panel:
    """Screen (page CSS px) <-> image px of one side in one panel.

    Worked out here from the workspace's documented rule, not by asking the page: a panel is the
    canvas, measured in whole CSS px; A's frame fitted into it with a 3 % margin is zoom 1; the
    view's centre (cx, cy) is a fraction of the frame and sits at the canvas centre; both sides
    share A's displayed rectangle, so B is stretched onto it per axis.
    """

    left: float
    top: float
    sx: float
    sy: float
    ox: float
    oy: float

    def screen(self, x: float, y: float) -> tuple[float, float]:
        return (self.left + self.ox + x * self.sx, self.top + self.oy + y * self.sy)

    def image(self, px: float, py: float) -> tuple[float, float]:
        return ((px - self.left - self.ox) / self.sx, (py - self.top - self.oy) / self.sy)


def view(page: Page) -> dict:
    return page.evaluate("() => window.diffmarkWorkspace.getView()")


def panel(
    page: Page, index: int, ref: dict, side: dict, *, pixel_scale: float | None = None
) -> Panel:
    """Panel `index` (0 left, 1 right) showing a side of frame `side`; `ref` is A's frame.
    `pixel_scale` (CSS px per pixel of A) pins the zoom instead of taking it from the view."""
    box = page.locator(f"[data-view='{index}'] canvas").bounding_box()
    assert box is not None, "the view's canvas is visible"
    width, height = js_round(box["width"]), js_round(box["height"])
    v = view(page)
    fit = min(width / ref["width"], height / ref["height"]) * 0.97
    base = pixel_scale if pixel_scale is not None else fit * v["zoom"]
    disp_w, disp_h = ref["width"] * base, ref["height"] * base
    return Panel(
        left=box["x"],
        top=box["y"],
        sx=disp_w / side["width"],
        sy=disp_h / side["height"],
        ox=width / 2 - v["cx"] * disp_w,
        oy=height / 2 - v["cy"] * disp_h,
    )


def mouse_at(p: Panel, x: float, y: float) -> tuple[int, int]:
    """Where a mouse pointing at image point (x, y) is: a mouse moves in whole CSS px."""
    sx, sy = p.screen(x, y)
    return js_round(sx), js_round(sy)


def drag(page: Page, start: tuple[float, float], end: tuple[float, float]) -> None:
    """Press, move in a few steps, release: a box from `start` to `end` (screen points)."""
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=5)
    page.mouse.up()


def draw_box(
    page: Page, p: Panel, corner: tuple[float, float], other: tuple[float, float]
) -> list[float]:
    """Drag between the whole-px mouse positions over two image points; returns the image points
    under the mouse as the box [x1, y1, x2, y2] they span (unrounded)."""
    start, end = mouse_at(p, *corner), mouse_at(p, *other)
    drag(page, start, end)
    (x1, y1), (x2, y2) = p.image(*start), p.image(*end)
    return [min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)]


def within(got: list[int], want: list[float], tolerance: float) -> bool:
    return len(got) == len(want) and all(
        abs(g - w) <= tolerance for g, w in zip(got, want, strict=True)
    )


def mirrored(box: list[int], source: dict, target: dict) -> list[int]:
    """The same region in the target frame: each coordinate scaled per axis, whole px."""
    kx, ky = target["width"] / source["width"], target["height"] / source["height"]
    x1, y1, x2, y2 = box
    return [js_round(x1 * kx), js_round(y1 * ky), js_round(x2 * kx), js_round(y2 * ky)]


def zoom_to(page: Page, percent: int, presses: int) -> None:
    """1:1 (Z), then `presses` × "+" through the whole-number zoom steps, around the centre."""
    page.keyboard.press("z")
    for _ in range(presses):
        page.keyboard.press("+")
    expect(page.locator("[data-zoom-level]")).to_have_text(f"{percent}%")


# -- pairs with a known picture ---------------------------------------------------------------

SQUARE = (200, 150, 240, 190)  # black on A, white on B, in A's frame
FLAT = (50, 40)  # the middle of a flat grey area of both
BLACK, WHITE = (0, 0, 0), (255, 255, 255)
SHOWN = (240, 400)  # the EXIF-rotated photo as displayed: portrait
PATCH = (150, 60, 210, 120)  # a magenta square in the displayed frame, top right
MAGENTA = (255, 0, 255)


def black_and_white_pair(project: Project, *, size_b: tuple[int, int]) -> Pair:
    """A photo with a black square at SQUARE (in A's frame), and the same photo with a white one
    there, resized to `size_b`: the largest possible difference, in one known place, and none
    at all around FLAT (elsewhere B's resampling makes small differences of its own)."""
    scene = np.asarray(photo(size=SIZE, offset=_offset(project))).copy()
    scene[0:80, 0:100] = 128  # FLAT: identical on A and on B resampled, whatever the photo
    x1, y1, x2, y2 = SQUARE
    a, b = scene.copy(), scene.copy()
    a[y1:y2, x1:x2] = 0
    b[y1:y2, x1:x2] = 255
    b_image = Image.fromarray(b).resize(size_b, Image.Resampling.NEAREST)
    return pair_create(
        project=project, pair_input=PairInput(encode(Image.fromarray(a)), encode(b_image))
    )


def exif_rotated_pair(project: Project) -> Pair:
    """A: a JPEG whose stored pixels are 400×240, with EXIF orientation 6 ("turn 90° clockwise
    to show"), so it is displayed 240×400 with PATCH where the displayed frame says; B: the
    displayed picture itself, a plain 240×400 PNG."""
    shown = np.asarray(photo("chelsea", size=SHOWN, offset=_offset(project))).copy()
    x1, y1, x2, y2 = PATCH
    shown[y1:y2, x1:x2] = MAGENTA
    upright = Image.fromarray(shown)
    stored = upright.transpose(Image.Transpose.ROTATE_90)  # 90° anticlockwise: 400×240
    exif = stored.getexif()
    exif[ExifTags.Base.Orientation] = 6
    a = encode(stored, "JPEG", quality=95, exif=exif)
    # The data itself is right: stored sideways, and turned upright the patch is where we put it.
    assert Image.open(io.BytesIO(a)).size == SHOWN[::-1]
    upright_again = np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(a))))
    assert np.abs(upright_again[(y1 + y2) // 2, (x1 + x2) // 2] - MAGENTA).max() < 40
    return pair_create(project=project, pair_input=PairInput(a, encode(upright)))


_READ_COLOUR = """([index, x, y]) => {
  const canvas = document.querySelector(`[data-view='${index}'] canvas`);
  const r = canvas.getBoundingClientRect();
  const k = canvas.width / r.width;
  const d = canvas.getContext('2d').getImageData((x - r.left) * k, (y - r.top) * k, 1, 1).data;
  return [d[0], d[1], d[2]];
}"""


def expect_colour(
    page: Page, index: int, point: tuple[float, float], rgb: tuple[int, int, int], tolerance=40
) -> None:
    """Panel `index` shows about `rgb` at a screen point (what the annotator sees there), once
    the page has painted; each channel within `tolerance`."""
    try:
        page.wait_for_function(
            f"""([index, x, y, want, tolerance]) => ({_READ_COLOUR})([index, x, y])
              .every((v, k) => Math.abs(v - want[k]) <= tolerance)""",
            arg=[index, *point, list(rgb), tolerance],
            timeout=5_000,
        )
    except PlaywrightTimeoutError:
        shown = page.evaluate(_READ_COLOUR, [index, *point])
        raise AssertionError(f"panel {index} shows {shown} at {point}, not about {rgb}") from None
