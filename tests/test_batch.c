/* recon/batch*.c without reconstruction: the runner with jobs that succeed, fail, crash, hang or
 * exit, input expansion and naming, the summaries, --resume and SIGINT.
 *
 * The "scans" here are small text files whose first word tells the fake job what to do:
 *   ok PSNR   write metrics.csv (PSNR given by the test) and a thumbnail
 *   fail      return an mr_error("deliberate failure ...")
 *   crash     abort()
 *   hang      sleep forever (killed by --timeout)
 *   exit3     print a line on stderr and exit(3) without a message
 *   hold      announce itself (<scan>.held next to it), wait until the FIFO hold.fifo in its folder is
 *             opened for writing (or is a plain file), then like "ok 30": a scan the test knows to be
 *             running, without timing anything
 * Asserted: each scan's final state and reason, that only complete folders appear (no .partial
 * left), that --resume leaves finished folders untouched (same inode and mtime) and redoes
 * changed inputs, that a non-empty OUTDIR is refused, and that SIGINT stops the batch with the
 * finished scans kept and the summary written. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/fsutil.h"
#include "io/image_png.h"
#include "recon/batch/batch.h"
#include "testutil.h"

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

static int exists(const char *dir, const char *name)
{
    char p[8400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat sb;
    return stat(p, &sb) == 0;
}

static int count_str(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* number of entries named .*.partial in dir */
static int partials(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '\\.partial$' > /dev/null", dir);
    return system(cmd) == 0;
}

static mr_status fake_job(const char *scan, const char *outdir, const mr_batch_slot *slot, void *ctx)
{
    (void)ctx;
    char word[32] = "";
    double psnr = 30;
    FILE *f = fopen(scan, "r");
    if (!f)
        return mr_error(MR_EIO, "%s: cannot open: %s", scan, strerror(errno));
    int n = fscanf(f, "%31s %lf", word, &psnr);
    fclose(f);
    if (n < 1)
        return mr_error(MR_EFORMAT, "%s: empty", scan);
    if (strcmp(word, "fail") == 0) { /* a log of 30 lines; the summaries keep the last 20 */
        for (int i = 1; i <= 30; i++)
            fprintf(stderr, "fail log line %d <b>%s\n", i, i == 30 ? " `tick` \033[1m" : "");
        return mr_error(MR_EFORMAT, "%s: deliberate failure (bad dataset)", scan);
    }
    if (strcmp(word, "crash") == 0)
        abort();
    if (strcmp(word, "hang") == 0)
        for (;;)
            pause();
    if (strcmp(word, "exit3") == 0) {
        fprintf(stderr, "exit3 last words\n");
        exit(3);
    }
    if (strcmp(word, "hold") == 0) {
        char dir[4096], p[4200];
        snprintf(dir, sizeof dir, "%s", scan);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        snprintf(p, sizeof p, "%s.held", scan);
        FILE *h = fopen(p, "w");
        if (h)
            fclose(h);
        snprintf(p, sizeof p, "%s/hold.fifo", dir);
        const int fd = open(p, O_RDONLY);
        char buf[16];
        while (fd >= 0 && read(fd, buf, sizeof buf) > 0)
            ;
        if (fd >= 0)
            close(fd);
    }
    char p[4096];
    snprintf(p, sizeof p, "%s/metrics.csv", outdir);
    FILE *m = fopen(p, "w");
    if (!m)
        return mr_error(MR_EIO, "%s: cannot write", p);
    fprintf(m, "method,truth,mse,psnr_db,snr_db,percent_error,seconds\n");
    fprintf(m, "cg,image,0.001,%g,20,5,0.5\ncg,bandlimited,0.0005,%g,21,4,0.5\n", psnr, psnr + 3);
    fclose(m);
    snprintf(p, sizeof p, "%s/slot.txt", outdir);
    m = fopen(p, "w");
    if (m) {
        fprintf(m, "%d %d %d\n", slot->worker, slot->gpu, slot->threads);
        fclose(m);
    }
    float pix[16];
    for (int i = 0; i < 16; i++)
        pix[i] = (float)i;
    snprintf(p, sizeof p, "%s/%s", outdir, MR_BATCH_THUMB);
    return mr_png_write_gray(p, pix, 4, 4, 0, 15, 8);
}

static void test_base64(void)
{
    /* RFC 4648 section 10 test vectors */
    static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        char *b = mr_base64((const unsigned char *)in[i], strlen(in[i]));
        CHECK(b && strcmp(b, out[i]) == 0);
        free(b);
    }
}

static void test_collect(const char *root)
{
    char d1[4096], d2[4096], d3[4096], p[4200];
    snprintf(d1, sizeof d1, "%s/in1", root);
    snprintf(d2, sizeof d2, "%s/in2", root);
    snprintf(d3, sizeof d3, "%s/lists", root);
    CHECK_OK(mr_mkdir_p(d1));
    CHECK_OK(mr_mkdir_p(d2));
    CHECK_OK(mr_mkdir_p(d3));
    const char *files[] = {"in1/b.h5", "in1/a.h5", "in1/notes.txt", "in1/.hidden.h5", "in2/a.h5", "in2/summary.csv.h5"};
    for (int i = 0; i < 6; i++) {
        snprintf(p, sizeof p, "%s/%s", root, files[i]);
        write_text(p, "ok 30\n");
    }
    snprintf(p, sizeof p, "%s/in1/sub.h5", root);
    CHECK_OK(mr_mkdir_p(p)); /* a folder named *.h5 is not a scan */
    snprintf(p, sizeof p, "%s/list.txt", d3);
    write_text(p, "# scans for the test\n../in2/a.h5\n\n   ../in1/b.h5   # listed again\nmissing.h5\n"
                  "../in2/summary.csv.h5\n");
    char at[4200], again[4200];
    snprintf(at, sizeof at, "@%s/list.txt", d3);
    snprintf(again, sizeof again, "%s/in1/a.h5", root);
    const char *inputs[] = {d1, at, again};
    mr_batch_list l;
    CHECK_OK(mr_batch_collect(inputs, 3, &l));
    printf("collect: %d scans\n", l.count);
    for (int i = 0; i < l.count; i++)
        printf("  %s -> %s\n", l.scans[i].path, l.scans[i].name);
    CHECK(l.count == 5);
    if (l.count == 5) {
        CHECK(strcmp(l.scans[0].name, "a") == 0 && strstr(l.scans[0].path, "in1/a.h5"));
        CHECK(strcmp(l.scans[1].name, "b") == 0 && strstr(l.scans[1].path, "in1/b.h5"));
        CHECK(strcmp(l.scans[2].name, "a-2") == 0 && strstr(l.scans[2].path, "lists/../in2/a.h5"));
        CHECK(strcmp(l.scans[3].name, "missing") == 0 && strstr(l.scans[3].path, "lists/missing.h5"));
        CHECK(strcmp(l.scans[4].name, "summary.csv-2") == 0);
    }
    mr_batch_list_free(&l);

    const char *bad[] = {"@/nonexistent/list.txt"};
    CHECK(mr_batch_collect(bad, 1, &l) == MR_EIO);
    printf("missing list file: %s\n", mr_last_error());
    CHECK(strstr(mr_last_error(), "/nonexistent/list.txt") != NULL);
}

static mr_batch_config make_config(const char *outdir, mr_batch_mode mode, int jobs, const char *fingerprint)
{
    mr_batch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.outdir = outdir;
    cfg.mode = mode;
    cfg.jobs = jobs;
    cfg.threads = 1;
    cfg.timeout = 3.0; /* the hanging scan's; the others take milliseconds of CPU, even on a loaded machine */
    cfg.fingerprint = fingerprint;
    cfg.progress = 1;
    cfg.job = fake_job;
    return cfg;
}

static int inode_mtime(const char *dir, const char *name, struct stat *sb)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, sb);
}

/* the first run: each scan's state and reason, the failed scans' logs, only complete folders, the slot
 * a scan ran in */
static void check_first_run(const mr_batch_list *l, const char *out, const char *const names[7],
                            const int gpus[3], double took)
{
    printf("batch with one 3 s timeout: %.0f s\n", took);
    for (int i = 0; i < l->count; i++)
        printf("  %-8s state %d  %.2f s  %s\n", l->scans[i].name, (int)l->scans[i].state, l->scans[i].seconds,
               l->scans[i].reason);
    CHECK(l->scans[0].state == MR_BATCH_DONE_NOW && l->scans[5].state == MR_BATCH_DONE_NOW);
    for (int i = 1; i <= 4; i++)
        CHECK(l->scans[i].state == MR_BATCH_FAILED);
    CHECK(l->scans[6].state == MR_BATCH_FAILED);
    CHECK(strstr(l->scans[1].reason, "deliberate failure (bad dataset)") != NULL);
    CHECK(strstr(l->scans[2].reason, "crashed") && strstr(l->scans[2].reason, "signal 6"));
    CHECK(strstr(l->scans[3].reason, "timed out") != NULL);
    CHECK_GE("time of the hanging scan (s)", l->scans[3].seconds, 3.0);
    CHECK(strstr(l->scans[4].reason, "status 3") && strstr(l->scans[4].reason, "exit3 last words"));
    CHECK(strstr(l->scans[6].reason, "absent.h5") && strstr(l->scans[6].reason, "No such file"));
    /* the end of the failed scan's log: its lines 12..30, then the runner's error line (20 lines) */
    const char *log = l->scans[1].log;
    printf("log kept for 'bad':\n%s\n", log ? log : "(none)");
    CHECK(log && count_str(log, "\n") == MR_BATCH_LOG_LINES - 1);
    CHECK(log && strstr(log, "fail log line 12 <b>\n") && strstr(log, "fail log line 30") && !strstr(log, "line 11 "));
    CHECK(log && strstr(log, "deliberate failure (bad dataset)") && strstr(log, "?[1m") && !strchr(log, '\033'));
    CHECK(l->scans[4].log && strcmp(l->scans[4].log, "exit3 last words") == 0);
    CHECK(l->scans[0].log == NULL);
    /* only complete folders */
    CHECK(exists(out, "good1/metrics.csv") && exists(out, "good1/" MR_BATCH_DONE));
    CHECK(exists(out, "good2/metrics.csv") && exists(out, "good2/" MR_BATCH_DONE));
    for (int i = 1; i <= 4; i++)
        CHECK(!exists(out, names[i]));
    CHECK(!partials(out));
    char p[4200];
    snprintf(p, sizeof p, "%s/good1/slot.txt", out);
    char *slot = read_text(p);
    int w = -1, g = -2, t = -1;
    CHECK(slot && sscanf(slot, "%d %d %d", &w, &g, &t) == 3);
    printf("good1 ran on worker %d gpu %d threads %d\n", w, g, t);
    CHECK(w >= 0 && w < 3 && g == gpus[w] && t == 2);
    free(slot);
}

/* summary.csv, summary.md and summary.html of the first run */
static void check_summaries(const char *out, const mr_batch_list *l)
{
    char p[4200];
    CHECK_OK(mr_batch_write_summary(out, l, "test batch"));
    snprintf(p, sizeof p, "%s/summary.csv", out);
    char *csv = read_text(p);
    CHECK(csv != NULL);
    if (csv) {
        int lines = count_str(csv, "\n");
        printf("summary.csv: %d lines\n", lines);
        CHECK(lines == 1 + 2 + 2 + 5); /* header, 2 truths x 2 good scans, 5 failures */
        CHECK(strstr(csv, "good1,") && strstr(csv, ",ok,cg,image,0.001,31.5,"));
        CHECK(strstr(csv, ",ok,cg,image,0.001,28.25,") != NULL);
        CHECK(strstr(csv, "deliberate failure (bad dataset)") != NULL);
        CHECK(strstr(csv, "timed out") != NULL);
        CHECK(count_str(csv, ",failed,") == 5);
        CHECK(strstr(csv, ",reason,log_tail\n") != NULL);
        CHECK(strstr(csv, "\"fail log line 12 <b>\\nfail log line 13 <b>\\n") != NULL);
    }
    free(csv);
    snprintf(p, sizeof p, "%s/summary.md", out);
    char *md = read_text(p);
    CHECK(md && strstr(md, "deliberate failure (bad dataset)") && strstr(md, "31.5"));
    CHECK(md && strstr(md, "\n```\nfail log line 12 <b>\n") && strstr(md, "fail log line 30") && !strstr(md, "line 11 "));
    free(md);
    snprintf(p, sizeof p, "%s/summary.html", out);
    char *html = read_text(p);
    snprintf(p, sizeof p, "%s/good1/%s", out, MR_BATCH_THUMB);
    char *png = read_text(p); /* binary, but only its length and bytes matter */
    struct stat sb;
    CHECK(stat(p, &sb) == 0);
    char *b64 = png ? mr_base64((const unsigned char *)png, (size_t)sb.st_size) : NULL;
    CHECK(html && b64);
    if (html && b64) {
        CHECK(count_str(html, "<tr class=\"scan") == 7);
        CHECK(strstr(html, b64) != NULL); /* the thumbnail is embedded */
        CHECK(strstr(html, "http://") == NULL && strstr(html, "https://") == NULL);
        CHECK(strstr(html, "deliberate failure (bad dataset)") != NULL);
        CHECK(strstr(html, "<details class=\"log\">") && strstr(html, "fail log line 12 &lt;b&gt;\nfail log line 13"));
    }
    free(html);
    free(png);
    free(b64);
}

/* the runs after the first: a fresh one refused, --resume keeping finished folders, redoing fixed and
 * changed inputs and everything with other options, and removing a stale partial folder */
static void check_resume(mr_batch_config *cfg, mr_batch_list *l, const char *out, char paths[7][4200],
                         int *interrupted)
{
    char p[4200];
    /* a second fresh run is refused and touches nothing */
    struct stat before, after;
    CHECK(inode_mtime(out, "good1", &before) == 0);
    cfg->mode = MR_BATCH_FRESH;
    CHECK(mr_batch_run(cfg, l, interrupted) == MR_EINVAL);
    printf("fresh run into a non-empty folder: %s\n", mr_last_error());
    CHECK(strstr(mr_last_error(), "--resume") != NULL);

    /* resume: finished scans untouched, a fixed input redone, failures retried */
    write_text(paths[1], "ok 25");
    struct stat mbefore;
    CHECK(inode_mtime(out, "good1/metrics.csv", &mbefore) == 0);
    cfg->mode = MR_BATCH_RESUME;
    CHECK_OK(mr_batch_run(cfg, l, interrupted));
    CHECK(l->scans[0].state == MR_BATCH_RESUMED && l->scans[5].state == MR_BATCH_RESUMED);
    CHECK(l->scans[1].state == MR_BATCH_DONE_NOW);
    CHECK(l->scans[2].state == MR_BATCH_FAILED && l->scans[3].state == MR_BATCH_FAILED);
    CHECK(inode_mtime(out, "good1", &after) == 0);
    CHECK(after.st_ino == before.st_ino && after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
          after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    CHECK(inode_mtime(out, "good1/metrics.csv", &after) == 0);
    CHECK(after.st_ino == mbefore.st_ino && after.st_mtim.tv_nsec == mbefore.st_mtim.tv_nsec);
    CHECK(!partials(out));

    /* a changed input is redone on resume, and so is everything with other options */
    write_text(paths[5], "ok 29"); /* the same size: an mtime of its own, set rather than waited for */
    const struct timespec later[2] = {{0, UTIME_OMIT}, {time(NULL) + 10, 0}};
    CHECK(utimensat(AT_FDCWD, paths[5], later, 0) == 0);
    CHECK_OK(mr_batch_run(cfg, l, interrupted));
    CHECK(l->scans[0].state == MR_BATCH_RESUMED && l->scans[5].state == MR_BATCH_DONE_NOW);
    snprintf(p, sizeof p, "%s/good2/metrics.csv", out);
    char *m2 = read_text(p);
    CHECK(m2 && strstr(m2, ",29,"));
    free(m2);
    cfg->fingerprint = "iters=6";
    CHECK_OK(mr_batch_run(cfg, l, interrupted));
    CHECK(l->scans[0].state == MR_BATCH_DONE_NOW && l->scans[5].state == MR_BATCH_DONE_NOW);

    /* a stale partial folder (a killed run) is removed on resume */
    snprintf(p, sizeof p, "%s/.good1.partial", out);
    CHECK_OK(mr_mkdir_p(p));
    snprintf(p, sizeof p, "%s/.good1.partial/junk", out);
    write_text(p, "half written");
    CHECK_OK(mr_batch_run(cfg, l, interrupted));
    CHECK(!partials(out));
}

static void test_run(const char *root)
{
    static const char *const kinds[] = {"ok 31.5", "fail", "crash", "hang", "exit3", "ok 28.25", NULL};
    static const char *const names[] = {"good1", "bad", "crashes", "hangs", "exits", "good2", "absent"};
    char in[4096], out[4096], paths[7][4200];
    snprintf(in, sizeof in, "%s/scans", root);
    snprintf(out, sizeof out, "%s/out", root);
    CHECK_OK(mr_mkdir_p(in));
    const char *inputs[7];
    for (int i = 0; i < 7; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s.h5", in, names[i]);
        if (kinds[i])
            write_text(paths[i], kinds[i]);
        inputs[i] = paths[i];
    }
    mr_batch_list l;
    CHECK_OK(mr_batch_collect(inputs, 7, &l));
    CHECK(l.count == 7);
    int gpus[3] = {0, 1, 0};
    mr_batch_config cfg = make_config(out, MR_BATCH_FRESH, 3, "iters=5");
    cfg.gpus = gpus;
    cfg.threads = 2;
    int interrupted = 1;
    double t0 = (double)time(NULL);
    CHECK_OK(mr_batch_run(&cfg, &l, &interrupted));
    double took = (double)time(NULL) - t0;
    CHECK(interrupted == 0);
    check_first_run(&l, out, names, gpus, took);
    check_summaries(out, &l);
    check_resume(&cfg, &l, out, paths, &interrupted);
    mr_batch_list_free(&l);
}

/* SIGINT in the middle: the child runs the batch, the test interrupts it once the first scan is finished
 * and the second is held running (it waits on a FIFO nobody opens until the resume). */
static void test_interrupt(const char *root)
{
    char in[4096], out[4096], paths[4][4200], fifo[4200], held[4300];
    snprintf(in, sizeof in, "%s/slow", root);
    snprintf(out, sizeof out, "%s/out-int", root);
    CHECK_OK(mr_mkdir_p(in));
    snprintf(fifo, sizeof fifo, "%s/hold.fifo", in);
    CHECK(mkfifo(fifo, 0600) == 0);
    const char *inputs[4];
    for (int i = 0; i < 4; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/s%d.h5", in, i);
        write_text(paths[i], i == 0 ? "ok 30" : "hold");
        inputs[i] = paths[i];
    }
    snprintf(held, sizeof held, "%s.held", paths[1]);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        mr_batch_list l;
        if (mr_batch_collect(inputs, 4, &l) != MR_OK)
            _exit(2);
        mr_batch_config cfg = make_config(out, MR_BATCH_FRESH, 1, "x");
        cfg.timeout = 0; /* s1 is held until the interrupt */
        int interrupted = 0;
        mr_status st = mr_batch_run(&cfg, &l, &interrupted);
        if (mr_batch_write_summary(out, &l, "interrupted") != MR_OK)
            st = MR_EIO;
        mr_batch_list_free(&l);
        _exit(st != MR_OK ? 1 : interrupted ? 130 : 0);
    }
    /* s1 held means s0 is finished and committed (one worker: s1 starts after s0's folder is in place) */
    struct stat sb;
    while (stat(held, &sb) != 0 && waitpid(pid, NULL, WNOHANG) == 0) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    CHECK(stat(held, &sb) == 0);
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    printf("interrupted batch: exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 130);
    CHECK(exists(out, "s0/metrics.csv"));
    CHECK(!exists(out, "s3"));
    CHECK(!partials(out));
    char p[4200];
    snprintf(p, sizeof p, "%s/summary.csv", out);
    char *csv = read_text(p);
    CHECK(csv && strstr(csv, "s0,") && strstr(csv, ",interrupted,"));
    free(csv);

    struct stat before, after;
    CHECK(inode_mtime(out, "s0", &before) == 0);
    /* the resume: the held scans go through (the FIFO replaced by a plain file) */
    CHECK(unlink(fifo) == 0);
    write_text(fifo, "go");
    mr_batch_list l;
    CHECK_OK(mr_batch_collect(inputs, 4, &l));
    mr_batch_config cfg = make_config(out, MR_BATCH_RESUME, 2, "x");
    int interrupted = 1;
    CHECK_OK(mr_batch_run(&cfg, &l, &interrupted));
    CHECK(interrupted == 0);
    CHECK(l.scans[0].state == MR_BATCH_RESUMED);
    for (int i = 1; i < 4; i++)
        CHECK(l.scans[i].state == MR_BATCH_DONE_NOW || l.scans[i].state == MR_BATCH_RESUMED);
    CHECK(inode_mtime(out, "s0", &after) == 0);
    CHECK(after.st_ino == before.st_ino && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    mr_batch_list_free(&l);
}

int main(void)
{
    const char *root = test_tmpdir("batch");
    printf("scratch %s\n", root);
    test_base64();
    test_collect(root);
    test_run(root);
    test_interrupt(root);
    int rc = test_finish("test_batch");
    if (rc == 0) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", root);
    }
    return rc;
}
