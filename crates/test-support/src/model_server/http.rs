//! A small HTTP/1.1 server on a loopback socket: reads requests (with `content-length`
//! or chunked bodies), records them, and plays scripted responses step by step — which
//! lets it pause between chunks, reset the connection mid-stream, or never answer.

use std::sync::Arc;
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{ReadHalf, WriteHalf};

use super::{Body, MockResponse, Outcome, RecordedRequest, Shared, Step};

/// Longest request head or body accepted.
const MAX_REQUEST: usize = 32 * 1024 * 1024;

pub(super) async fn serve_connection(mut stream: TcpStream, shared: Arc<Shared>, connection: u64) {
    if stream.set_nodelay(true).is_err() {
        return;
    }
    let mut buffer = Vec::new();
    loop {
        let Some(mut request) = read_request(&mut stream, &mut buffer).await else {
            return;
        };
        request.connection = connection;
        let (index, response) = shared.record(request);
        let keep = play(&mut stream, &shared, index, response).await;
        if !keep {
            return;
        }
    }
}

/// Reads one request; `None` at EOF or on garbage.
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<RecordedRequest> {
    let head_end = loop {
        if let Some(end) = find(buffer, b"\r\n\r\n") {
            break end;
        }
        if buffer.len() > MAX_REQUEST || !fill(stream, buffer).await {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    buffer.drain(..head_end + 4);
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            Some((name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        })
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    let body = if header("transfer-encoding")
        .is_some_and(|value| value.eq_ignore_ascii_case("chunked"))
    {
        read_chunked(stream, buffer).await?
    } else {
        let length: usize = header("content-length").map_or(Some(0), |value| value.parse().ok())?;
        if length > MAX_REQUEST {
            return None;
        }
        while buffer.len() < length {
            if !fill(stream, buffer).await {
                return None;
            }
        }
        buffer.drain(..length).collect()
    };
    Some(RecordedRequest {
        method,
        path,
        headers,
        body,
        connection: 0,
        received_at: Instant::now(),
    })
}

async fn read_chunked(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(end) = find(buffer, b"\r\n") {
                break end;
            }
            if !fill(stream, buffer).await {
                return None;
            }
        };
        let size_text = String::from_utf8_lossy(&buffer[..line_end]).into_owned();
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        buffer.drain(..line_end + 2);
        while buffer.len() < size + 2 {
            if !fill(stream, buffer).await {
                return None;
            }
        }
        body.extend(buffer.drain(..size));
        buffer.drain(..2);
        if size == 0 || body.len() > MAX_REQUEST {
            return Some(body);
        }
    }
}

async fn fill(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 16 * 1024];
    match stream.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(read) => {
            buffer.extend_from_slice(&chunk[..read]);
            true
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Plays a response; returns whether the connection stays open for another request.
async fn play(
    stream: &mut TcpStream,
    shared: &Shared,
    index: usize,
    response: MockResponse,
) -> bool {
    match response.body {
        Body::Reset => {
            shared.finish(index, reset(stream));
            return false;
        }
        Body::Close => {
            shared.finish(index, Outcome::Closed);
            return false;
        }
        Body::Hang => {
            let outcome = wait_for_client(stream, std::future::pending()).await;
            shared.finish(index, outcome.unwrap_or(Outcome::ClientGone));
            return false;
        }
        Body::Full(_) | Body::Steps(_) => {}
    }
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    match &response.body {
        Body::Full(bytes) => head.push_str(&format!("content-length: {}\r\n\r\n", bytes.len())),
        _ => head.push_str("transfer-encoding: chunked\r\n\r\n"),
    }
    shared.mark_head_sent(index, Instant::now());
    if stream.write_all(head.as_bytes()).await.is_err() {
        shared.finish(index, Outcome::ClientGone);
        return false;
    }
    let steps = match response.body {
        Body::Full(bytes) => {
            let ok = stream.write_all(&bytes).await.is_ok();
            shared.finish(
                index,
                if ok {
                    Outcome::Completed
                } else {
                    Outcome::ClientGone
                },
            );
            return ok;
        }
        Body::Steps(steps) => steps,
        Body::Reset | Body::Close | Body::Hang => Vec::new(),
    };
    for step in steps {
        match step {
            Step::Send(bytes) => {
                if bytes.is_empty() {
                    continue;
                }
                let frame = [format!("{:x}\r\n", bytes.len()).as_bytes(), &bytes, b"\r\n"].concat();
                shared.mark_chunk_sent(index, Instant::now());
                if stream.write_all(&frame).await.is_err() {
                    shared.finish(index, Outcome::ClientGone);
                    return false;
                }
            }
            Step::Pause(duration) => {
                if let Some(outcome) = wait_for_client(stream, tokio::time::sleep(duration)).await {
                    shared.finish(index, outcome);
                    return false;
                }
            }
            Step::Hold(gate) => {
                if let Some(outcome) = wait_for_client(stream, gate.opened()).await {
                    shared.finish(index, outcome);
                    return false;
                }
            }
            Step::Reset => {
                shared.finish(index, reset(stream));
                return false;
            }
        }
    }
    if stream.write_all(b"0\r\n\r\n").await.is_err() {
        shared.finish(index, Outcome::ClientGone);
        return false;
    }
    shared.finish(index, Outcome::Completed);
    true
}

/// Waits until `until` is ready, noticing a client that goes away meanwhile (then says
/// so).
async fn wait_for_client(
    stream: &mut TcpStream,
    until: impl Future<Output = ()>,
) -> Option<Outcome> {
    let (mut reader, _writer): (ReadHalf<'_>, WriteHalf<'_>) = stream.split();
    let mut probe = [0u8; 1024];
    let gone = async {
        loop {
            match reader.read(&mut probe).await {
                Ok(0) | Err(_) => return Outcome::ClientGone,
                // A client does not send while a response is under way; ignore stray bytes.
                Ok(_) => {}
            }
        }
    };
    tokio::select! {
        outcome = gone => Some(outcome),
        () = until => None,
    }
}

/// Arms the socket to close with RST instead of FIN (when it is dropped next).
fn reset(stream: &TcpStream) -> Outcome {
    match stream.set_zero_linger() {
        Ok(()) => Outcome::Reset,
        Err(_) => Outcome::Closed,
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}
