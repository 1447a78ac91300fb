//! The notes tools, registered on an [`McpToolRegistry`]. Every change is written to the data
//! file before the tool answers: a change is applied to a copy, the copy is saved, and only
//! then does it become the served state, so an answer the model sees is always on disk.
//!
//! Annotations are honest (MCP `ToolAnnotations`): `readOnlyHint` on the tools that only read;
//! `destructiveHint: true` only on `note_update` (it replaces text, the old text is gone);
//! `note_trash` is not destructive because `note_restore` undoes it; `idempotentHint` where a
//! repeated call with the same arguments changes nothing more; `openWorldHint: false`
//! everywhere (a local notebook).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use capability_model::{Annotations, CancelToken, ToolOutput};
use mcp_adapter::{HandlerError, McpToolRegistry, RegistryError};
use serde_json::{Map, Value, json};

use crate::store::{Note, Notes, NotesFile, now_rfc3339};

/// Longest title, in characters.
const MAX_TITLE: u64 = 200;
/// Longest note text, in characters.
const MAX_CONTENT: u64 = 20_000;
/// Characters of content shown in list and search results.
const PREVIEW_CHARS: usize = 160;

/// The notebook: served state plus its file.
#[derive(Debug, Clone)]
pub(crate) struct Notebook {
    state: Arc<Mutex<Notes>>,
    file: NotesFile,
    /// Test aid (`--slow-ms`): each call waits this long before it runs.
    slow: Option<Duration>,
}

/// What a tool asked of the notebook did not make sense (one sentence for the model).
type Refusal = String;

impl Notebook {
    pub(crate) fn new(notes: Notes, file: NotesFile, slow: Option<Duration>) -> Notebook {
        Notebook {
            state: Arc::new(Mutex::new(notes)),
            file,
            slow,
        }
    }

    fn read<T>(&self, f: impl FnOnce(&Notes) -> T) -> T {
        f(&self.state.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Applies `f` to a copy, saves the copy, then serves it. A refusal changes nothing; a
    /// failed save changes nothing and is a handler error (the client sees the generic
    /// failure sentence, MCP-09).
    fn change(
        &self,
        f: impl FnOnce(&mut Notes) -> Result<Value, Refusal>,
    ) -> Result<ToolOutput, HandlerError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut next = state.clone();
        match f(&mut next) {
            Err(refusal) => Ok(ToolOutput::error(refusal)),
            Ok(answer) => {
                self.file.save(&next).map_err(|e| {
                    tracing::error!(error = %e, "notes file not written");
                    Box::new(e) as HandlerError
                })?;
                *state = next;
                Ok(ToolOutput::json(answer))
            }
        }
    }
}

fn id_of(args: &Map<String, Value>) -> u64 {
    args.get("id").and_then(Value::as_u64).unwrap_or(0)
}

fn text_of<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn strings_of(args: &Map<String, Value>, key: &str) -> Vec<String> {
    args.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

fn limit_of(args: &Map<String, Value>) -> usize {
    args.get("limit").and_then(Value::as_u64).unwrap_or(50) as usize
}

fn no_such_note(id: u64) -> Refusal {
    format!("No note has id {id}; use note_search or note_list to find the id.")
}

/// The note `id`, if it exists and is not in the trash.
fn live_note(notes: &mut Notes, id: u64) -> Result<&mut Note, Refusal> {
    let note = notes
        .notes
        .iter_mut()
        .find(|n| n.id == id)
        .ok_or_else(|| no_such_note(id))?;
    if note.trashed {
        return Err(format!(
            "Note {id} is in the trash; restore it with note_restore first."
        ));
    }
    Ok(note)
}

fn full(note: &Note) -> Value {
    serde_json::to_value(note).unwrap_or(Value::Null)
}

fn summary(note: &Note) -> Value {
    let mut preview: String = note.content.chars().take(PREVIEW_CHARS).collect();
    if note.content.chars().count() > PREVIEW_CHARS {
        preview.push('…');
    }
    json!({
        "id": note.id, "title": note.title, "preview": preview, "tags": note.tags,
        "archived": note.archived, "trashed": note.trashed, "updatedAt": note.updated_at,
    })
}

fn add_tags(note: &mut Note, tags: &[String]) {
    for tag in tags {
        if !note.tags.iter().any(|t| t.eq_ignore_ascii_case(tag)) {
            note.tags.push(tag.clone());
        }
    }
}

fn annotations(read_only: bool, destructive: bool, idempotent: bool) -> Annotations {
    Annotations {
        read_only_hint: Some(read_only),
        destructive_hint: (!read_only).then_some(destructive),
        idempotent_hint: Some(idempotent),
        open_world_hint: Some(false),
    }
}

fn id_schema() -> Value {
    json!({"type": "integer", "minimum": 1, "description": "The note's id."})
}

fn tags_schema(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 40},
           "maxItems": 20, "description": description})
}

/// Registers every notes tool.
pub(crate) fn register(
    registry: &mut McpToolRegistry,
    book: &Notebook,
) -> Result<(), RegistryError> {
    let tool = |registry: &mut McpToolRegistry,
                name: &'static str,
                title: &str,
                description: &str,
                schema: Value,
                hints: Annotations,
                run: fn(&Notebook, Map<String, Value>) -> Result<ToolOutput, HandlerError>|
     -> Result<(), RegistryError> {
        let book = book.clone();
        registry.tool(
            name,
            Some(title),
            description,
            schema,
            hints,
            move |args, cancel| {
                let book = book.clone();
                async move {
                    if let Some(delay) = book.slow
                        && !wait(name, delay, &cancel).await
                    {
                        return Ok(ToolOutput::error("The call was cancelled."));
                    }
                    run(&book, args)
                }
            },
        )?;
        Ok(())
    };

    tool(
        registry,
        "note_add",
        "Add a note",
        "Create a new note. Search first (note_search) so you do not create a duplicate. \
         Returns the new note with its id.",
        json!({"type": "object", "additionalProperties": false, "required": ["content"],
            "properties": {
                "title": {"type": "string", "maxLength": MAX_TITLE,
                          "description": "Short title; empty or omitted: the first line of the content."},
                "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT,
                            "description": "The note's text."},
                "tags": tags_schema("Tags, e.g. [\"shopping\"].")}}),
        annotations(false, false, false),
        |book, args| {
            let content = text_of(&args, "content").unwrap_or_default().to_owned();
            let title = match text_of(&args, "title").map(str::trim) {
                Some(t) if !t.is_empty() => t.to_owned(),
                _ => content
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .take(60)
                    .collect(),
            };
            let tags = strings_of(&args, "tags");
            book.change(|notes| {
                let now = now_rfc3339();
                let mut note = Note {
                    id: notes.next_id,
                    title,
                    content,
                    tags: Vec::new(),
                    archived: false,
                    trashed: false,
                    created_at: now.clone(),
                    updated_at: now,
                };
                add_tags(&mut note, &tags);
                notes.next_id += 1;
                let answer = full(&note);
                notes.notes.push(note);
                Ok(answer)
            })
        },
    )?;

    tool(
        registry,
        "note_get",
        "Read a note",
        "Read one note in full, by id (also works for notes in the trash).",
        json!({"type": "object", "additionalProperties": false, "required": ["id"],
               "properties": {"id": id_schema()}}),
        annotations(true, false, true),
        |book, args| {
            let id = id_of(&args);
            Ok(
                book.read(|notes| match notes.notes.iter().find(|n| n.id == id) {
                    Some(note) => ToolOutput::json(full(note)),
                    None => ToolOutput::error(no_such_note(id)),
                }),
            )
        },
    )?;

    tool(
        registry,
        "note_list",
        "List notes",
        "List notes, most recently changed first, with a short preview of each. By default \
         archived notes and the trash are left out.",
        json!({"type": "object", "additionalProperties": false, "properties": {
            "tag": {"type": "string", "minLength": 1, "description": "Only notes with this tag."},
            "includeArchived": {"type": "boolean", "description": "Also list archived notes (default false)."},
            "trash": {"type": "boolean", "description": "List the trash instead (default false)."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 200, "description": "At most this many (default 50)."}}}),
        annotations(true, false, true),
        |book, args| {
            let tag = text_of(&args, "tag").map(str::trim).map(str::to_owned);
            let archived = args
                .get("includeArchived")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let trash = args.get("trash").and_then(Value::as_bool).unwrap_or(false);
            let limit = limit_of(&args);
            Ok(book.read(|notes| {
                let mut found: Vec<&Note> = notes
                    .notes
                    .iter()
                    .filter(|n| n.trashed == trash)
                    .filter(|n| trash || archived || !n.archived)
                    .filter(|n| {
                        tag.as_ref()
                            .is_none_or(|t| n.tags.iter().any(|x| x.eq_ignore_ascii_case(t)))
                    })
                    .collect();
                found.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(b.id.cmp(&a.id)));
                let total = found.len();
                let items: Vec<Value> = found.into_iter().take(limit).map(summary).collect();
                ToolOutput::json(json!({"notes": items, "total": total}))
            }))
        },
    )?;

    tool(
        registry,
        "note_search",
        "Search notes",
        "Find notes whose title, text or tags contain the query (case-insensitive). The trash \
         is never searched; archived notes only when includeArchived is true.",
        json!({"type": "object", "additionalProperties": false, "required": ["query"], "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 200},
            "includeArchived": {"type": "boolean", "description": "Also search archived notes (default false)."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 200, "description": "At most this many (default 50)."}}}),
        annotations(true, false, true),
        |book, args| {
            let query = text_of(&args, "query")
                .unwrap_or_default()
                .trim()
                .to_lowercase();
            let archived = args
                .get("includeArchived")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let limit = limit_of(&args);
            Ok(book.read(|notes| {
                let mut found: Vec<&Note> = notes
                    .notes
                    .iter()
                    .filter(|n| !n.trashed && (archived || !n.archived))
                    .filter(|n| {
                        n.title.to_lowercase().contains(&query)
                            || n.content.to_lowercase().contains(&query)
                            || n.tags.iter().any(|t| t.to_lowercase().contains(&query))
                    })
                    .collect();
                found.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(b.id.cmp(&a.id)));
                let total = found.len();
                let items: Vec<Value> = found.into_iter().take(limit).map(summary).collect();
                ToolOutput::json(json!({"notes": items, "total": total}))
            }))
        },
    )?;

    tool(
        registry,
        "note_append",
        "Append to a note",
        "Add text to the end of a note, on a new line. Use this to add to a note; note_update \
         would replace the whole text.",
        json!({"type": "object", "additionalProperties": false, "required": ["id", "text"],
            "properties": {"id": id_schema(),
                "text": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT}}}),
        annotations(false, false, false),
        |book, args| {
            let id = id_of(&args);
            let text = text_of(&args, "text").unwrap_or_default().to_owned();
            book.change(|notes| {
                let note = live_note(notes, id)?;
                if note.content.chars().count() + text.chars().count() + 1 > MAX_CONTENT as usize {
                    return Err(format!(
                        "Note {id} would exceed {MAX_CONTENT} characters; start a new note instead."
                    ));
                }
                if !note.content.is_empty() {
                    note.content.push('\n');
                }
                note.content.push_str(&text);
                note.updated_at = now_rfc3339();
                Ok(full(note))
            })
        },
    )?;

    tool(
        registry,
        "note_update",
        "Replace a note's title or text",
        "Replace the title and/or the whole text of a note. The previous text is lost; to add \
         text use note_append. Give at least one of title or content.",
        json!({"type": "object", "additionalProperties": false, "required": ["id"],
            "properties": {"id": id_schema(),
                "title": {"type": "string", "minLength": 1, "maxLength": MAX_TITLE},
                "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT}}}),
        annotations(false, true, true),
        |book, args| {
            let id = id_of(&args);
            let title = text_of(&args, "title").map(str::to_owned);
            let content = text_of(&args, "content").map(str::to_owned);
            if title.is_none() && content.is_none() {
                return Ok(ToolOutput::error(
                    "Give a new title, a new content, or both.",
                ));
            }
            book.change(|notes| {
                let note = live_note(notes, id)?;
                if let Some(title) = title {
                    note.title = title;
                }
                if let Some(content) = content {
                    note.content = content;
                }
                note.updated_at = now_rfc3339();
                Ok(full(note))
            })
        },
    )?;

    tool(
        registry,
        "note_tag",
        "Tag a note",
        "Add and/or remove tags on a note. Tags compare case-insensitively; adding a tag the \
         note has, or removing one it lacks, changes nothing.",
        json!({"type": "object", "additionalProperties": false, "required": ["id"],
            "properties": {"id": id_schema(),
                "add": tags_schema("Tags to add."),
                "remove": tags_schema("Tags to remove.")}}),
        annotations(false, false, true),
        |book, args| {
            let id = id_of(&args);
            let add = strings_of(&args, "add");
            let remove = strings_of(&args, "remove");
            if add.is_empty() && remove.is_empty() {
                return Ok(ToolOutput::error("Give tags to add or to remove."));
            }
            book.change(|notes| {
                let note = live_note(notes, id)?;
                note.tags
                    .retain(|t| !remove.iter().any(|r| r.eq_ignore_ascii_case(t)));
                add_tags(note, &add);
                note.updated_at = now_rfc3339();
                Ok(full(note))
            })
        },
    )?;

    tool(
        registry,
        "note_archive",
        "Archive or unarchive a note",
        "Archive a note (hidden from note_list and note_search unless includeArchived), or \
         bring it back with archived=false.",
        json!({"type": "object", "additionalProperties": false, "required": ["id"],
            "properties": {"id": id_schema(),
                "archived": {"type": "boolean", "description": "true (default) archives, false unarchives."}}}),
        annotations(false, false, true),
        |book, args| {
            let id = id_of(&args);
            let archived = args
                .get("archived")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            book.change(|notes| {
                let note = live_note(notes, id)?;
                if note.archived != archived {
                    note.archived = archived;
                    note.updated_at = now_rfc3339();
                }
                Ok(full(note))
            })
        },
    )?;

    tool(
        registry,
        "note_trash",
        "Move a note to the trash",
        "Move a note to the trash instead of deleting it. It disappears from list and search \
         and can be brought back with note_restore.",
        json!({"type": "object", "additionalProperties": false, "required": ["id"],
               "properties": {"id": id_schema()}}),
        annotations(false, false, true),
        |book, args| {
            let id = id_of(&args);
            book.change(|notes| {
                let note = notes
                    .notes
                    .iter_mut()
                    .find(|n| n.id == id)
                    .ok_or_else(|| no_such_note(id))?;
                if !note.trashed {
                    note.trashed = true;
                    note.updated_at = now_rfc3339();
                }
                Ok(full(note))
            })
        },
    )?;

    tool(
        registry,
        "note_restore",
        "Restore a note from the trash",
        "Bring a note back from the trash (note_list with trash=true shows what is there).",
        json!({"type": "object", "additionalProperties": false, "required": ["id"],
               "properties": {"id": id_schema()}}),
        annotations(false, false, true),
        |book, args| {
            let id = id_of(&args);
            book.change(|notes| {
                let note = notes
                    .notes
                    .iter_mut()
                    .find(|n| n.id == id)
                    .ok_or_else(|| no_such_note(id))?;
                if note.trashed {
                    note.trashed = false;
                    note.updated_at = now_rfc3339();
                }
                Ok(full(note))
            })
        },
    )?;
    Ok(())
}

/// The `--slow-ms` test aid: announces on stderr that the call started (tool name only, no
/// arguments) and waits. `false` when the call was cancelled meanwhile.
async fn wait(tool: &str, delay: Duration, cancel: &CancelToken) -> bool {
    eprintln!(
        "notes-plugin: test aid: {tool} started, waiting {} ms",
        delay.as_millis()
    );
    tokio::select! {
        () = tokio::time::sleep(delay) => true,
        () = cancel.cancelled() => false,
    }
}
