#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

#[test]
fn an_explicit_address_gets_a_scheme_and_loses_its_trailing_slash() {
    assert_eq!(resolve_address("127.0.0.1:8265"), "http://127.0.0.1:8265");
    assert_eq!(resolve_address("http://head:8265/"), "http://head:8265");
    assert_eq!(resolve_address("https://ray.example:443"), "https://ray.example:443");
}

#[test]
fn rows_are_the_marked_lines_with_an_id_in_order() {
    let log = format!(
        "2026-12-04 INFO worker.py -- Connected to Ray cluster.\n\
         {ROW_MARK}{}\n\
         (lathe_task pid=12) {ROW_MARK}{}\n\
         {ROW_MARK}not json\n\
         {ROW_MARK}{}\n\
         {ROW_MARK}{}\n",
        json!({"id": "a", "status": "resolved"}),
        json!({"id": "forwarded", "status": "resolved"}),
        json!({"status": "no id"}),
        json!({"id": "b", "status": "timeout"}),
    );
    let ids: Vec<Value> = rows_in(&log).into_iter().map(|row| row["id"].clone()).collect();
    assert_eq!(ids, vec![json!("a"), json!("b")]);
}

#[tokio::test]
async fn a_port_that_refuses_is_unreachable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let err = check(&format!("127.0.0.1:{port}")).await.expect_err("no dashboard");
    assert!(matches!(err, RayError::Unreachable { .. }), "{err}");
    assert!(
        err.to_string().starts_with(&format!("no Ray dashboard answers at http://127.0.0.1:{port}")),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_that_is_not_ray_is_unreachable() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        let (mut socket, _) = listener.accept().await.expect("accept");
        let mut buf = [0u8; 1024];
        let _ = tokio::io::AsyncReadExt::read(&mut socket, &mut buf).await;
        let body = "{\"hello\": 1}";
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        socket.write_all(reply.as_bytes()).await.expect("write");
    });
    let err = check(&format!("http://127.0.0.1:{port}")).await.expect_err("not Ray");
    assert!(err.to_string().contains("answered no ray_version"), "{err}");
}
