//! Draws the menu and the toasts with egui: pure drawing. Everything shown comes from the model,
//! the menu state and the toasts; clicks are returned for the systems to apply through
//! [`SaveMenu`], like the keyboard.

use super::model::{Badge, MenuModel, ShownSave, SlotRow, SyncBadge};
use super::state::{Confirmation, SaveMenu};
use super::textures::ThumbnailTextures;
use super::toast_queue::{ToastKind, Toasts};
use crate::plugin::SlotAction;
use bevy_egui::egui::{self, Align, Align2, Color32, RichText, Vec2};

const THUMBNAIL: Vec2 = Vec2::new(112.0, 63.0);
const BUTTON: Vec2 = Vec2::new(66.0, 26.0);
const MENU_SIZE: Vec2 = Vec2::new(820.0, 590.0);
const DANGER: Color32 = Color32::from_rgb(222, 84, 72);
const WARNING: Color32 = Color32::from_rgb(232, 170, 60);
const GOOD: Color32 = Color32::from_rgb(96, 186, 110);

/// What the menu draws from, this frame.
pub(crate) struct MenuFrame<'a> {
    pub(crate) model: &'a MenuModel,
    pub(crate) menu: &'a SaveMenu,
    pub(crate) textures: &'a ThumbnailTextures,
    /// Scroll the selected row into view (after keyboard navigation).
    pub(crate) scroll_to_selection: bool,
}

/// What the player clicked in the menu this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MenuClick {
    /// A row, beside its buttons: selects it.
    Row(usize),
    /// A button of a row.
    Button(usize, SlotAction),
    /// A conflicting row's "Use the save from <device>" button: the save kept below heads the
    /// slot instead.
    UseHiddenSave(usize),
    /// The open question's confirm (`true`) or cancel (`false`) button, or the backdrop around
    /// it (cancel).
    Answer(bool),
}

/// Draws the open menu; returns the click, if any. Draws only: the caller applies the click.
pub(crate) fn draw_menu(ctx: &egui::Context, frame: &MenuFrame) -> Option<MenuClick> {
    // The menu handles the keyboard itself; a focused egui button would also take Enter.
    ctx.memory_mut(|memory| {
        if let Some(id) = memory.focused() {
            memory.surrender_focus(id);
        }
    });
    let mut clicked = None;
    egui::Window::new("Save / Load")
        .collapsible(false)
        .resizable(false)
        .anchor(Align2::CENTER_CENTER, Vec2::ZERO)
        .fixed_size(MENU_SIZE)
        .show(ctx, |ui| {
            egui::ScrollArea::vertical()
                .max_height(MENU_SIZE.y - 44.0)
                .auto_shrink([false, false])
                .show(ui, |ui| clicked = draw_sections(ui, frame));
            ui.separator();
            draw_footer(ui, frame.model);
        });
    if let Some(question) = frame.menu.confirmation()
        && let Some(confirm) = draw_confirmation(ctx, question)
    {
        clicked = Some(MenuClick::Answer(confirm));
    }
    clicked
}

/// The sections and their rows; returns the row or button clicked.
fn draw_sections(ui: &mut egui::Ui, frame: &MenuFrame) -> Option<MenuClick> {
    let mut clicked = None;
    let mut index = 0;
    for section in &frame.model.sections {
        ui.add_space(4.0);
        ui.label(RichText::new(section.kind.heading()).strong().size(16.0));
        ui.add_space(2.0);
        for row in &section.rows {
            let selected = index == frame.menu.selected_row();
            let texture = row
                .save
                .as_ref()
                .and_then(|save| save.thumbnail)
                .and_then(|key| frame.textures.ready(key));
            let action = selected.then(|| frame.menu.selected_action()).flatten();
            let response = draw_row(ui, row, selected, action, texture);
            if selected && frame.scroll_to_selection {
                response.row.scroll_to_me(Some(Align::Center));
            }
            if let Some(action) = response.pressed {
                clicked = Some(MenuClick::Button(index, action));
            } else if response.use_hidden_save {
                clicked = Some(MenuClick::UseHiddenSave(index));
            } else if response.row.clicked() {
                clicked = Some(MenuClick::Row(index));
            }
            index += 1;
        }
    }
    clicked
}

/// The key help, and why the saves could not be listed if they could not.
fn draw_footer(ui: &mut egui::Ui, model: &MenuModel) {
    ui.horizontal(|ui| {
        ui.label(
            RichText::new("Up / Down: slot    Left / Right: button    Enter: press    Esc: close")
                .weak(),
        );
        if let Some(error) = &model.listing_error {
            ui.label(RichText::new(format!("Saves could not be listed: {error}")).color(DANGER));
        }
    });
}

struct RowResponse {
    row: egui::Response,
    pressed: Option<SlotAction>,
    use_hidden_save: bool,
}

fn draw_row(
    ui: &mut egui::Ui,
    row: &SlotRow,
    selected: bool,
    selected_action: Option<SlotAction>,
    texture: Option<&egui::TextureHandle>,
) -> RowResponse {
    let visuals = ui.visuals().clone();
    let stroke = if selected {
        egui::Stroke::new(2.0, visuals.selection.stroke.color)
    } else {
        egui::Stroke::new(1.0, visuals.widgets.noninteractive.bg_stroke.color)
    };
    let mut pressed = None;
    let mut use_hidden_save = false;
    // The row senses clicks *below* its buttons (registered first), so a click on a button
    // presses the button and a click elsewhere on the row selects the row.
    let row_ui = egui::UiBuilder::new().sense(egui::Sense::click());
    let scope = ui.scope_builder(row_ui, |ui| {
        // Text in a row is not selectable, so a click on it selects the row.
        ui.style_mut().interaction.selectable_labels = false;
        egui::Frame::new()
            .fill(visuals.faint_bg_color)
            .stroke(stroke)
            .corner_radius(6)
            .inner_margin(egui::Margin::same(8))
            .show(ui, |ui| {
                ui.set_width(ui.available_width());
                ui.horizontal(|ui| {
                    draw_thumbnail(ui, row, texture);
                    let buttons_width = 3.0 * BUTTON.x + 3.0 * ui.spacing().item_spacing.x + 28.0;
                    let text_width = (ui.available_width() - buttons_width).max(120.0);
                    ui.allocate_ui_with_layout(
                        Vec2::new(text_width, THUMBNAIL.y),
                        egui::Layout::top_down(Align::Min),
                        |ui| use_hidden_save = draw_row_text(ui, row),
                    );
                    ui.with_layout(egui::Layout::right_to_left(Align::Center), |ui| {
                        for action in SlotAction::ALL.into_iter().rev() {
                            let button = egui::Button::new(action.label())
                                .min_size(BUTTON)
                                .selected(selected_action == Some(action));
                            if ui.add_enabled(row.actions.allows(action), button).clicked() {
                                pressed = Some(action);
                            }
                        }
                        if row.busy {
                            ui.add(egui::Spinner::new().size(18.0));
                        }
                    });
                });
            });
    });
    RowResponse {
        row: scope.response,
        pressed,
        use_hidden_save,
    }
}

fn draw_thumbnail(ui: &mut egui::Ui, row: &SlotRow, texture: Option<&egui::TextureHandle>) {
    if let Some(texture) = texture {
        ui.add(
            egui::Image::new(texture)
                .fit_to_exact_size(THUMBNAIL)
                .corner_radius(4),
        );
        return;
    }
    let (rect, _) = ui.allocate_exact_size(THUMBNAIL, egui::Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 4.0, ui.visuals().extreme_bg_color);
    let caption = match (&row.badge, &row.save) {
        (Some(Badge::Empty), _) => "Empty",
        (Some(Badge::Damaged { .. }), _) => "Damaged",
        (_, Some(save)) if save.thumbnail.is_some() => "\u{2026}",
        _ => "No picture",
    };
    painter.text(
        rect.center(),
        Align2::CENTER_CENTER,
        caption,
        egui::FontId::proportional(13.0),
        ui.visuals().weak_text_color(),
    );
}

/// The slot's cloud state. A conflict says both saves are kept and offers a button naming the
/// device whose save is kept below; returns whether it was clicked.
fn draw_sync_badge(ui: &mut egui::Ui, sync: &SyncBadge) -> bool {
    let color = match sync {
        SyncBadge::Synced => GOOD,
        SyncBadge::Uploading => ui.visuals().hyperlink_color,
        SyncBadge::Offline | SyncBadge::Conflict { .. } => WARNING,
    };
    ui.label(RichText::new(sync.label()).small().color(color));
    match sync {
        // The choice is sent as the `cloud` feature's message; without it there is no one to ask.
        SyncBadge::Conflict { hidden_device } if cfg!(feature = "cloud") => ui
            .small_button(format!("Use the save from {hidden_device}"))
            .on_hover_text("That save heads the slot instead; this one is kept as a backup")
            .clicked(),
        _ => false,
    }
}

/// The row's name, badges, title and times; returns whether the conflict button was clicked.
fn draw_row_text(ui: &mut egui::Ui, row: &SlotRow) -> bool {
    ui.spacing_mut().item_spacing.y = 4.0;
    let mut use_hidden_save = false;
    ui.horizontal(|ui| {
        ui.label(RichText::new(&row.name).strong().size(15.0));
        if let Some(badge) = &row.badge {
            let color = match badge {
                Badge::Empty => ui.visuals().weak_text_color(),
                Badge::Damaged { .. } => DANGER,
                Badge::RestoredFromBackup { .. } => WARNING,
            };
            let label = ui.label(RichText::new(badge.label()).small().color(color));
            if let Badge::Damaged { reason } | Badge::RestoredFromBackup { reason } = badge {
                label.on_hover_text(reason);
            }
        }
        if let Some(sync) = &row.sync {
            use_hidden_save = draw_sync_badge(ui, sync);
        }
    });
    match &row.save {
        Some(save) => {
            let title = if save.title.is_empty() {
                "Untitled save"
            } else {
                &save.title
            };
            ui.add(egui::Label::new(title).truncate());
            ui.add(egui::Label::new(RichText::new(save_details(save)).weak()).truncate());
        }
        None => {
            let hint = match row.badge {
                Some(Badge::Damaged { .. }) if row.actions.allows(SlotAction::Save) => {
                    "This save cannot be read. Saving here replaces it."
                }
                Some(Badge::Damaged { .. }) => "This save cannot be read.",
                _ if row.actions.allows(SlotAction::Save) => "Free slot",
                _ => "Nothing saved yet",
            };
            ui.label(RichText::new(hint).weak());
        }
    }
    use_hidden_save
}

/// A save's secondary line: when it was made, how long was played, when it recorded one on
/// which device, and for a crash save why it was written ("2026-11-21 14:03 · 3 min ago ·
/// played 1 h 02 min · on steamdeck · saved when the game crashed"). One line, so neither
/// adds height to the row.
fn save_details(save: &ShownSave) -> String {
    let mut line = format!(
        "{} \u{b7} {} \u{b7} played {}",
        save.local_time, save.relative_time, save.playtime
    );
    if let Some(device) = &save.device {
        line.push_str(&format!(" \u{b7} on {device}"));
    }
    if let Some(crash) = save.crash {
        line.push_str(&format!(" \u{b7} {}", crash.label()));
    }
    line
}

/// Shows the question; `Some(true)` when confirmed, `Some(false)` when cancelled.
fn draw_confirmation(ctx: &egui::Context, question: &Confirmation) -> Option<bool> {
    let mut answer = None;
    let modal = egui::Modal::new(egui::Id::new("keepsake-confirmation")).show(ctx, |ui| {
        ui.set_width(400.0);
        ui.heading(&question.heading);
        ui.add_space(6.0);
        ui.label(&question.message);
        ui.add_space(12.0);
        ui.horizontal(|ui| {
            let mut confirm = egui::Button::new(
                RichText::new(question.confirm_label)
                    .strong()
                    .color(Color32::WHITE),
            )
            .min_size(BUTTON);
            confirm = confirm.fill(match question.action {
                SlotAction::Delete => DANGER,
                _ => ui.visuals().selection.bg_fill,
            });
            if ui.add(confirm).clicked() {
                answer = Some(true);
            }
            if ui
                .add(egui::Button::new("Cancel").min_size(BUTTON))
                .clicked()
            {
                answer = Some(false);
            }
            ui.label(RichText::new("Enter / Esc").weak());
        });
    });
    if modal.backdrop_response.clicked() {
        answer = Some(false);
    }
    answer
}

/// Draws the toasts in the top-right corner.
pub(crate) fn draw_toasts(ctx: &egui::Context, toasts: &Toasts) {
    egui::Area::new(egui::Id::new("keepsake-toasts"))
        .anchor(Align2::RIGHT_TOP, Vec2::new(-16.0, 16.0))
        .order(egui::Order::Tooltip)
        .interactable(false)
        .show(ctx, |ui| {
            for shown in toasts.iter() {
                let accent = match shown.toast.kind {
                    ToastKind::Progress => ui.visuals().selection.bg_fill,
                    ToastKind::Success => GOOD,
                    ToastKind::Error => DANGER,
                };
                egui::Frame::new()
                    .fill(ui.visuals().window_fill)
                    .stroke(egui::Stroke::new(1.5, accent))
                    .corner_radius(6)
                    .inner_margin(egui::Margin::symmetric(12, 8))
                    .show(ui, |ui| {
                        ui.set_max_width(360.0);
                        ui.horizontal(|ui| {
                            if shown.toast.kind == ToastKind::Progress {
                                ui.add(egui::Spinner::new().size(14.0));
                            }
                            let text = RichText::new(&shown.toast.text)
                                .size(15.0)
                                .color(ui.visuals().strong_text_color());
                            ui.add(egui::Label::new(text).wrap());
                        });
                    });
                ui.add_space(6.0);
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlotId;
    use crate::ui::model::RowActions;
    use egui::{Event, PointerButton, Pos2, RawInput, Rect};

    /// What one frame of a row reported: the button pressed, whether the row itself was
    /// clicked, and whether the conflict button was.
    type Clicks = (Option<SlotAction>, bool, bool);

    /// Runs one egui frame of a single row, with `events`; returns the row's rectangle and
    /// its clicks.
    fn frame(ctx: &egui::Context, row: &SlotRow, events: Vec<Event>) -> (Rect, Clicks) {
        let mut out = None;
        let mut output = ctx.run_ui(input(events), |ui| {
            let response = draw_row(ui, row, false, None, None);
            let clicks = (
                response.pressed,
                response.row.clicked(),
                response.use_hidden_save,
            );
            out = Some((response.row.rect, clicks));
        });
        output.textures_delta.clear(); // nothing renders them here
        out.unwrap()
    }

    /// One frame's input on a 900 × 300 screen.
    fn input(events: Vec<Event>) -> RawInput {
        RawInput {
            events,
            screen_rect: Some(Rect::from_min_size(Pos2::ZERO, Vec2::new(900.0, 300.0))),
            ..RawInput::default()
        }
    }

    /// Draws `row` in one frame; returns its rectangle and every text it drew.
    fn drawn_text(row: &SlotRow) -> (Rect, Vec<String>) {
        fn texts(shape: &egui::Shape, out: &mut Vec<String>) {
            match shape {
                egui::Shape::Text(text) => out.push(text.galley.text().to_owned()),
                egui::Shape::Vec(shapes) => shapes.iter().for_each(|shape| texts(shape, out)),
                _ => {}
            }
        }
        let ctx = egui::Context::default();
        let mut rect = None;
        let mut output = ctx.run_ui(input(Vec::new()), |ui| {
            rect = Some(draw_row(ui, row, false, None, None).row.rect);
        });
        output.textures_delta.clear(); // nothing renders them here
        let mut drawn = Vec::new();
        for clipped in &output.shapes {
            texts(&clipped.shape, &mut drawn);
        }
        (rect.unwrap(), drawn)
    }

    fn click(ctx: &egui::Context, row: &SlotRow, at: Pos2) -> Clicks {
        frame(ctx, row, vec![Event::PointerMoved(at)]);
        let press = |pressed| Event::PointerButton {
            pos: at,
            button: PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        };
        frame(ctx, row, vec![press(true)]);
        frame(ctx, row, vec![press(false)]).1
    }

    #[test]
    fn a_click_on_a_button_presses_it_and_a_click_beside_the_buttons_selects_the_row() {
        let ctx = egui::Context::default();
        let row = SlotRow {
            slot: SlotId::Manual(2),
            name: "Manual 3".to_owned(),
            save: None,
            badge: None,
            sync: None,
            busy: false,
            actions: RowActions::from_fn(|_| true),
        };
        let (rect, ..) = frame(&ctx, &row, Vec::new());
        // The buttons are right-aligned inside the row's 8-point margin: Delete is last.
        let delete = Pos2::new(rect.right() - 9.0 - BUTTON.x / 2.0, rect.center().y);
        assert_eq!(
            click(&ctx, &row, delete),
            (Some(SlotAction::Delete), false, false)
        );
        let name = Pos2::new(rect.left() + THUMBNAIL.x + 30.0, rect.top() + 18.0);
        assert_eq!(
            click(&ctx, &row, name),
            (None, true, false),
            "on the slot's name"
        );
        let thumbnail = Pos2::new(rect.left() + 20.0, rect.center().y);
        assert_eq!(
            click(&ctx, &row, thumbnail),
            (None, true, false),
            "on the thumbnail"
        );
    }

    #[test]
    fn the_details_line_names_the_device_that_made_the_save_without_growing_the_row() {
        let save = ShownSave {
            title: "Harbour".to_owned(),
            saved_at: crate::format::Timestamp::from_unix_millis(0),
            local_time: "2026-11-21 14:03".to_owned(),
            relative_time: "3 min ago".to_owned(),
            playtime: "1 h 02 min".to_owned(),
            device: None,
            crash: None,
            thumbnail: None,
        };
        let mut row = SlotRow {
            slot: SlotId::Manual(0),
            name: "Manual 1".to_owned(),
            save: Some(save),
            badge: None,
            sync: None,
            busy: false,
            actions: RowActions::from_fn(|_| true),
        };
        let (plain_rect, plain) = drawn_text(&row);
        let details = "2026-11-21 14:03 \u{b7} 3 min ago \u{b7} played 1 h 02 min";
        assert!(plain.iter().any(|text| text == details), "{plain:?}");
        assert!(!plain.iter().any(|text| text.contains(" on ")), "{plain:?}");

        row.save.as_mut().unwrap().device = Some("Steam Deck".to_owned());
        let (rect, drawn) = drawn_text(&row);
        let with_device = format!("{details} \u{b7} on Steam Deck");
        assert!(drawn.contains(&with_device), "{drawn:?}");
        assert_eq!(rect, plain_rect, "the device shares the details' line");

        row.save.as_mut().unwrap().crash = Some(crate::format::CrashCause::Panic);
        let (rect, drawn) = drawn_text(&row);
        let crashed = format!("{with_device} \u{b7} saved when the game crashed");
        assert!(drawn.contains(&crashed), "{drawn:?}");
        assert_eq!(rect, plain_rect, "the crash label shares the details' line");
    }

    #[cfg(feature = "cloud")]
    #[test]
    fn a_conflicting_row_has_a_button_that_uses_the_save_kept_below() {
        let ctx = egui::Context::default();
        let mut row = SlotRow {
            slot: SlotId::Manual(0),
            name: "Manual 1".to_owned(),
            save: None,
            badge: None,
            sync: Some(SyncBadge::Synced),
            busy: false,
            actions: RowActions::from_fn(|_| true),
        };
        // Clicks along the line of the name and badges, left to right.
        let (rect, _) = frame(&ctx, &row, Vec::new());
        let line = |row: &SlotRow| -> Vec<Clicks> {
            let left = rect.left() + THUMBNAIL.x + 20.0;
            let right = rect.right() - 3.0 * BUTTON.x - 40.0;
            (0..)
                .map(|step| left + 4.0 * step as f32)
                .take_while(|&x| x < right)
                .map(|x| click(&ctx, row, Pos2::new(x, rect.top() + 18.0)))
                .collect()
        };
        let synced = line(&row);
        assert!(
            synced.iter().all(|&clicks| clicks == (None, true, false)),
            "without a conflict the line only selects the row: {synced:?}"
        );
        row.sync = Some(SyncBadge::Conflict {
            hidden_device: "laptop".to_owned(),
        });
        let conflict = line(&row);
        assert!(
            conflict.contains(&(None, false, true)),
            "somewhere on the line is the button: {conflict:?}"
        );
        assert!(
            conflict
                .iter()
                .all(|&clicks| clicks == (None, false, true) || clicks == (None, true, false)),
            "the button only uses the hidden save; elsewhere a click selects the row"
        );
    }
}
