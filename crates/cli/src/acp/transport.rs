//! Stdin and stdout as the connection's lines. As the SDK's `Stdio`, but a line that is not
//! UTF-8 is read with its invalid bytes replaced (U+FFFD, as the TypeScript SDK's decoder does):
//! it is then answered like any other line instead of ending the connection.

use futures::{Sink, Stream};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

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
    let outgoing = futures::sink::unfold(tokio::io::stdout(), async |mut stdout, line: String| {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        stdout.write_all(&bytes).await?;
        stdout.flush().await?;
        Ok::<_, std::io::Error>(stdout)
    });
    agent_client_protocol::Lines::new(Box::pin(outgoing), Box::pin(incoming))
}

/// One line read from stdin as text: the line ending dropped, invalid UTF-8 replaced.
fn decode(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    String::from_utf8_lossy(line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn a_line_is_decoded_without_its_ending_and_invalid_bytes_are_replaced() {
        assert_eq!(decode(b"{\"a\":1}\r\n"), "{\"a\":1}");
        assert_eq!(decode(b"{\"a\":1}"), "{\"a\":1}");
        assert_eq!(decode(b"\"\xff\xfe\"\n"), "\"\u{fffd}\u{fffd}\"");
    }
}
