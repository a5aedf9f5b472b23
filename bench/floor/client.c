/* The least a program can do between its start and a model request reaching the mock: connect to
 * 127.0.0.1:<port> and send one small Anthropic Messages request, then read the reply. The harness
 * times it exactly as it times an agent, so its figure is the part of "start -> first request" that
 * is process start and the harness's own spawn, not the agent. Usage: client <port> */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <port>\n", argv[0]);
        return 2;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[1]))};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        perror("connect");
        return 1;
    }
    const char *body = "{\"model\":\"m\",\"max_tokens\":16,\"stream\":true,"
                       "\"messages\":[{\"role\":\"user\",\"content\":\"do the task\"}]}";
    char request[512];
    int length = snprintf(request, sizeof request,
                          "POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                          "x-api-key: x\r\nanthropic-version: 2023-06-01\r\ncontent-length: %zu\r\n"
                          "connection: close\r\n\r\n%s",
                          strlen(body), body);
    if (write(fd, request, (size_t)length) != length) {
        perror("write");
        return 1;
    }
    char reply[4096];
    while (read(fd, reply, sizeof reply) > 0) {
    }
    close(fd);
    return 0;
}
