//! One WebSocket client (RFC 6455) at `/acp`: each text message is one JSON-RPC message to the
//! hub; what the hub queues for the client is written in order. The handshake selects the
//! subprotocol `lathe.acp` when offered (never echoing the `bearer.` one, which carries the
//! token). A write that does not complete within [`SEND_TIMEOUT`] (the client stopped reading and
//! the socket's buffers are full) ends the connection, as does the hub dropping the client.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Extension, State};
use axum::response::Response;
use futures::{SinkExt, StreamExt};
use tokio::sync::{Semaphore, mpsc};

use super::hub::{HubHandle, Inbound, Outbound, QUEUE, Queued};
use super::token::Role;

/// The subprotocol the page asks for.
pub const PROTOCOL: &str = "lathe.acp";
/// How long one write to a client may take.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest message a client may send (bytes).
const MAX_MESSAGE_BYTES: usize = 4 << 20;
/// A client's messages the hub may hold unhandled; the socket is read no further meanwhile.
pub const IN_FLIGHT: usize = 32;
/// The close code for a client dropped for not reading ("try again later", RFC 6455 §7.4.1 range).
const CLOSE_TOO_SLOW: u16 = 1013;

/// `GET /acp`: the upgrade.
pub async fn upgrade(
    State(hub): State<HubHandle>,
    Extension(role): Extension<Role>,
    ws: WebSocketUpgrade,
) -> Response {
    ws.protocols([PROTOCOL])
        .max_message_size(MAX_MESSAGE_BYTES)
        .max_frame_size(MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| serve(socket, role, hub))
}

async fn serve(socket: WebSocket, role: Role, hub: HubHandle) {
    let client = hub.next_client();
    let (tx, mut rx) = mpsc::channel(QUEUE);
    let queued = Queued::default();
    if hub.inbound.send(Inbound::Joined(client, role, tx, queued.clone())).is_err() {
        return;
    }
    let (mut sink, mut stream) = socket.split();
    let writer = async {
        while let Some(outbound) = rx.recv().await {
            let frames = match outbound {
                Outbound::Frame(frame) => vec![frame],
                Outbound::Batch(frames) => {
                    tracing::debug!(client, frames = frames.len(), "serve: replaying");
                    frames
                }
            };
            for frame in frames {
                queued.fetch_sub(frame.len(), Ordering::Relaxed);
                match tokio::time::timeout(SEND_TIMEOUT, sink.send(Message::Text(frame))).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => return,
                    Err(_) => {
                        tracing::info!(client, "serve: a write timed out; the client is dropped");
                        return;
                    }
                }
            }
        }
        // The hub dropped the client (its queue was full).
        let close = CloseFrame { code: CLOSE_TOO_SLOW, reason: "too slow: reconnect to catch up".into() };
        let _ = tokio::time::timeout(SEND_TIMEOUT, sink.send(Message::Close(Some(close)))).await;
    };
    let reader = async {
        // The client's messages the hub has not handled yet are bounded: past IN_FLIGHT the
        // socket is not read (TCP pushes back on the client), so no client grows the hub's queue.
        let in_flight = Arc::new(Semaphore::new(IN_FLIGHT));
        while let Some(Ok(message)) = stream.next().await {
            match message {
                Message::Text(text) => {
                    let Ok(permit) = in_flight.clone().acquire_owned().await else { return };
                    if hub.inbound.send(Inbound::Message(client, text.as_str().to_owned(), permit)).is_err() {
                        return;
                    }
                }
                Message::Close(_) => return,
                Message::Binary(_) | Message::Ping(_) | Message::Pong(_) => {}
            }
        }
    };
    tokio::select! {
        () = writer => {}
        () = reader => {}
    }
    let _ = hub.inbound.send(Inbound::Left(client));
}
