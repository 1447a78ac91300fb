//! The fake model server's HTTP/1.1: one request per connection (`Connection: close`),
//! `Content-Length` request bodies, JSON or chunked SSE responses.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Largest request head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Largest request body accepted (larger → 413).
pub(crate) const MAX_BODY: usize = 16 << 20;

/// One parsed request.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Request {
    /// The first header with that (case-insensitive) name.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why a request could not be read; each answers with a status (or nothing).
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The peer went away or sent nothing.
    Closed,
    /// Malformed head → 400.
    Malformed,
    /// Body over [`MAX_BODY`] → 413.
    TooLarge,
    /// No `Content-Length` (e.g. chunked) → 411.
    LengthRequired,
}

/// Reads one request.
pub(crate) async fn read_request(stream: &mut TcpStream) -> Result<Request, ReadError> {
    let mut buf = Vec::with_capacity(4096);
    let head_end = loop {
        if let Some(pos) = find(&buf, b"\r\n\r\n") {
            break pos;
        }
        if buf.len() > MAX_HEAD {
            return Err(ReadError::Malformed);
        }
        let mut chunk = [0u8; 4096];
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|_| ReadError::Closed)?;
        if n == 0 {
            return Err(ReadError::Closed);
        }
        buf.extend_from_slice(&chunk[..n]);
        // Not HTTP at all (e.g. a TLS ClientHello starts with 0x16): answer at once.
        if !buf[0].is_ascii_uppercase() {
            return Err(ReadError::Malformed);
        }
    };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(|_| ReadError::Malformed)?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next().ok_or(ReadError::Malformed)?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(ReadError::Malformed);
    };
    if !version.starts_with("HTTP/1.") {
        return Err(ReadError::Malformed);
    }
    let mut headers = Vec::new();
    for line in lines {
        let (k, v) = line.split_once(':').ok_or(ReadError::Malformed)?;
        headers.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    let mut request = Request {
        method: method.to_owned(),
        path: target.split('?').next().unwrap_or(target).to_owned(),
        headers,
        body: Vec::new(),
    };
    let length = match request.header("content-length") {
        Some(v) => v.parse::<usize>().map_err(|_| ReadError::Malformed)?,
        None if request.header("transfer-encoding").is_some() => {
            return Err(ReadError::LengthRequired);
        }
        None => 0,
    };
    if length > MAX_BODY {
        return Err(ReadError::TooLarge);
    }
    let mut body = buf.split_off(head_end + 4);
    while body.len() < length {
        let mut chunk = vec![0u8; (length - body.len()).min(64 * 1024)];
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|_| ReadError::Closed)?;
        if n == 0 {
            return Err(ReadError::Closed);
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    request.body = body;
    Ok(request)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Payload Too Large",
        425 => "Too Early",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// Writes a complete response with a `Content-Length` body.
pub(crate) async fn write_full(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    extra_headers: &[(&str, String)],
    body: &[u8],
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason(status),
        body.len()
    );
    for (k, v) in extra_headers {
        head.push_str(k);
        head.push_str(": ");
        head.push_str(v);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    stream.write_all(&out).await?;
    stream.flush().await
}

/// Writes the head of a chunked `text/event-stream` response.
pub(crate) async fn start_sse(stream: &mut TcpStream) -> std::io::Result<()> {
    stream
        .write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
              Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        )
        .await?;
    stream.flush().await
}

/// Writes one SSE event (`data: <json>\n\n`) as one HTTP chunk.
pub(crate) async fn write_event(stream: &mut TcpStream, data: &str) -> std::io::Result<()> {
    let payload = format!("data: {data}\n\n");
    write_chunk(stream, payload.as_bytes()).await
}

/// Writes raw bytes as one HTTP chunk.
pub(crate) async fn write_chunk(stream: &mut TcpStream, payload: &[u8]) -> std::io::Result<()> {
    let mut out = format!("{:x}\r\n", payload.len()).into_bytes();
    out.extend_from_slice(payload);
    out.extend_from_slice(b"\r\n");
    stream.write_all(&out).await?;
    stream.flush().await
}

/// Ends a chunked body.
pub(crate) async fn end_chunks(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.write_all(b"0\r\n\r\n").await?;
    stream.flush().await
}
