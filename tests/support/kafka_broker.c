/*
 * kafka_broker.c - a one-broker Kafka cluster for tests, built on
 * librdkafka's mock cluster (an in-process broker that speaks the real wire
 * protocol on a loopback port: Produce, Fetch, Metadata, InitProducerId...).
 *
 * Environment:
 *   TOPICS      comma list of topics to create (may be empty)
 *   PARTITIONS  partitions per topic (default 1)
 *
 * Output: exactly one line on stdout once the broker listens,
 *   {"listening":<port>,"bootstrap":"127.0.0.1:<port>"}
 * Everything else (fault changes, errors) goes to stderr.
 *
 * Signals:
 *   SIGTERM, SIGINT  destroy the cluster and exit 0
 *   SIGUSR1          broker down: its connections are closed and new ones
 *                    are refused (rd_kafka_mock_broker_set_down), so a
 *                    producer cannot deliver until...
 *   SIGUSR2          broker up again, same address, data kept
 *
 * The signals are blocked and taken synchronously with sigwaitinfo(), so
 * the mock API is only ever called from the main thread, never from a
 * handler. The process also asks to get SIGTERM when its parent dies, so a
 * crashed test cannot leave a broker behind.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#define BROKER_ID 1

static void die(const char *what)
{
    fprintf(stderr, "kafka_broker: %s\n", what);
    exit(1);
}

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return def;
    return atoi(v);
}

/* Creates every topic of the comma list; empty items are skipped. */
static void create_topics(rd_kafka_mock_cluster_t *mc, const char *list, int partitions)
{
    char *copy = strdup(list), *save = NULL;

    for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ')
            t++;
        if (*t == '\0')
            continue;
        rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(mc, t, partitions, 1);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            fprintf(stderr, "kafka_broker: cannot create topic %s: %s\n", t, rd_kafka_err2str(err));
            exit(1);
        }
    }
    free(copy);
}

/* The mock cluster hosts itself in a client instance; a producer with no
 * bootstrap servers is the lightest one.
 *
 * The mock broker sets up the sockets it accepts with the HOST instance's
 * configuration, so socket.nagle.disable here is what gives the broker's
 * connections TCP_NODELAY, as a real Kafka broker has (its SocketServer
 * sets it on every accepted socket). Without it the broker's responses are
 * subject to Nagle: a small response written while the previous one is not
 * yet acknowledged waits for the client's delayed ACK, 40 ms on Linux,
 * whenever the client has no request to piggyback the ACK on. Measured
 * with ingest (idempotent producer, 32 clients): p50 1-43 ms and 1-15k
 * req/s with Nagle, 0.6 ms and 40-50k req/s without. */
static rd_kafka_t *host_instance(void)
{
    char errstr[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();

    /* The host instance itself never talks to anyone: keep it quiet. */
    if (rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "socket.nagle.disable", "true", errstr, sizeof(errstr)) !=
            RD_KAFKA_CONF_OK)
        die(errstr);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    if (rk == NULL)
        die(errstr);
    return rk;
}

int main(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    /* Before any librdkafka thread exists, so they all inherit the mask. */
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1)
        return 0; /* the parent was already gone */

    rd_kafka_t *rk = host_instance();
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, 1);
    if (mc == NULL)
        die("cannot create the mock cluster");
    const char *topics = getenv("TOPICS");
    if (topics != NULL)
        create_topics(mc, topics, env_int("PARTITIONS", 1));

    /* One broker: the bootstrap list is "127.0.0.1:<port>". */
    const char *boot = rd_kafka_mock_cluster_bootstraps(mc);
    const char *colon = strrchr(boot, ':');
    if (colon == NULL)
        die("unexpected bootstrap list");
    printf("{\"listening\":%d,\"bootstrap\":\"%s\"}\n", atoi(colon + 1), boot);
    fflush(stdout);

    for (;;) {
        int sig = sigwaitinfo(&set, NULL);
        if (sig == SIGUSR1) {
            rd_kafka_mock_broker_set_down(mc, BROKER_ID);
            fprintf(stderr, "kafka_broker: broker down\n");
        } else if (sig == SIGUSR2) {
            rd_kafka_mock_broker_set_up(mc, BROKER_ID);
            fprintf(stderr, "kafka_broker: broker up\n");
        } else if (sig == SIGTERM || sig == SIGINT) {
            break;
        }
    }
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return 0;
}
