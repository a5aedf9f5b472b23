//! Stdin and stdout as the connection's lines. As the SDK's `Stdio`, but a line that is not
//! UTF-8 is read with its invalid bytes replaced (U+FFFD, as the TypeScript SDK's decoder does):
//! it is then answered like any other line instead of ending the connection; and a client that
//! stops reading (stdout a broken pipe) ends the connection as closing stdin does, not as an error.

use futures::{Sink, Stream};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// The lines of stdin (without their line ending) and a sink writing each line to stdout,
/// flushed.
pub fn stdio() -> agent_client_protocol::Lines<
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
> {
    let incoming = futures::stream::unfold(BufReader::new(tokio::io::stdin()), |mut reader| async move {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) => None,
            Ok(_) => Some((Ok(decode(&line)), reader)),
            Err(error) => Some((Err(error), reader)),
        }
    });
    agent_client_protocol::Lines::new(Box::pin(lines_to(tokio::io::stdout())), Box::pin(incoming))
}

/// A sink writing each line to `out` with `\n`, flushed. Once the reader has gone (a write fails
/// with `BrokenPipe`: the client closed its end), later lines are dropped instead of failing the
/// connection: the client has left, and the connection ends when stdin does, the sessions ended
/// as `Quit` ends them. Other write errors are the sink's errors.
fn lines_to<W: AsyncWrite + Unpin + Send + 'static>(
    out: W,
) -> impl Sink<String, Error = std::io::Error> + Send + 'static {
    futures::sink::unfold((out, false), async |(mut out, gone), line: String| {
        if gone {
            return Ok((out, true));
        }
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        let written = match out.write_all(&bytes).await {
            Ok(()) => out.flush().await,
            Err(error) => Err(error),
        };
        match written {
            Ok(()) => Ok((out, false)),
            Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
                tracing::info!("acp: the client stopped reading; later messages are dropped");
                Ok((out, true))
            }
            Err(error) => Err(error),
        }
    })
}

/// One line read from stdin as text: the line ending dropped, invalid UTF-8 replaced.
fn decode(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    String::from_utf8_lossy(line).into_owned()
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use futures::SinkExt;
    use tokio::io::AsyncReadExt;

    use super::{decode, lines_to};

    #[tokio::test]
    async fn lines_are_written_flushed_and_dropped_once_the_reader_has_gone() {
        let (writer, mut reader) = tokio::io::duplex(64);
        let mut sink = Box::pin(lines_to(writer));
        sink.send("{\"a\":1}".to_string()).await.expect("written");
        let mut read = [0u8; 8];
        reader.read_exact(&mut read).await.expect("read");
        assert_eq!(&read, b"{\"a\":1}\n");
        drop(reader);
        sink.send("{\"b\":2}".to_string()).await.expect("a broken pipe is not an error");
        sink.send("{\"c\":3}".to_string()).await.expect("nor is a line after it");
    }

    #[test]
    fn a_line_is_decoded_without_its_ending_and_invalid_bytes_are_replaced() {
        assert_eq!(decode(b"{\"a\":1}\r\n"), "{\"a\":1}");
        assert_eq!(decode(b"{\"a\":1}"), "{\"a\":1}");
        assert_eq!(decode(b"\"\xff\xfe\"\n"), "\"\u{fffd}\u{fffd}\"");
    }
}
