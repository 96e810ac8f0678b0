# Hands one hook call to metacog's resident process (metacog/server.py) and prints
# its reply. Usage: perl -T client.pl <the resident folder>, the payload on stdin.
#
# Core Perl and no modules: `use Socket` alone costs 12 ms, four times this whole script
# (a Python start costs 11 ms or more bare, about 20 inside Claude Code). -T: the person's
# PERL5OPT and PERL5LIB do not apply here. Two phases:
# - until the resident process takes the call (the byte it sends when it starts on
#   this connection) and this script reads stdin, every failure exits $NOT_TAKEN (or
#   $LATE when the resident did not take the call in time) with stdin untouched:
#   hooks/run.sh then runs the hook itself. Bounded: a resident busy for
#   2 s is as good as none.
# - from the first read of stdin, the call is the resident's: a failure ends in
#   silence (exit $DONE), like the hook's own failures.
use strict;
# The protocol's values, as metacog/protocol.py defines them (tests/test_protocol.py).
my $SOCKET = 'hook.sock';
my $MAGIC = 'metacog1';
my $TAKEN = '+';
my $ENV_CAP = 8 << 20;
my $TAKE_SECONDS = 2;
my $CALL_SECONDS = 9;
my $NOT_TAKEN = 3;
my $LATE = 4;
my $DONE = 0;
# One handler for both phases: Perl runs whatever handler is set when it gets to the
# signal, so swapping handlers would let a late alarm end a taken call in silence.
my $status = $NOT_TAKEN;
$SIG{ALRM} = sub { exit $status };
alarm $TAKE_SECONDS;
my ($dir) = ($ARGV[0] // '') =~ /\A(.+)\z/s or exit $NOT_TAKEN;  # untainted: run.sh's own argument
# The folder and the socket must be this user's alone: the environment below goes to
# whatever listens there, and it may hold secrets.
my @st = lstat $dir;
exit $NOT_TAKEN unless @st && -d _ && $st[4] == $< && !($st[2] & 077);
chdir $dir or exit $NOT_TAKEN;  # then a relative address: socket paths are limited to ~104 bytes
my $name = $SOCKET;
@st = lstat $name;
exit $NOT_TAKEN unless @st && -S _ && $st[4] == $<;

# The environment travels with the call: it decides where metacog keeps its files.
delete $ENV{PERL_BADLANG};  # run.sh's, for this script alone
my $env = join '', map { "$_=$ENV{$_}\0" } keys %ENV;
exit $NOT_TAKEN if length $env > $ENV_CAP;

socket(my $sock, 1, 1, 0) or exit $NOT_TAKEN;  # AF_UNIX, SOCK_STREAM: 1 and 1 on Linux and macOS
# BSDs and macOS lead sockaddr_un with a length byte; Linux, Cygwin, Android do not.
my $address = $^O =~ /bsd|darwin|dragonfly/ ? pack('CC', 2 + length $name, 1) . $name : pack('S', 1) . $name;
connect($sock, $address) or exit $NOT_TAKEN;
binmode $_ for $sock, \*STDIN, \*STDOUT;
my $taken;
$status = $LATE;  # connected, and the alarm comes first: a resident busy, or stuck
my $got = sysread($sock, $taken, 1);
$status = $NOT_TAKEN;
exit $NOT_TAKEN unless $got && $taken eq $TAKEN;

# Taken. 9 s in all (Claude Code's limit is 10); the resident's watchdog ends a call
# stuck for 6 s.
alarm($CALL_SECONDS - (time - $^T) > 1 ? $CALL_SECONDS - (time - $^T) : 1);
$SIG{PIPE} = 'IGNORE';

sub send_all {
    my ($data) = @_;
    my ($done, $size) = (0, length $data);
    while ($done < $size) {
        my $wrote = syswrite($sock, $data, $size - $done, $done);
        exit $DONE unless defined $wrote;
        $done += $wrote;
    }
}

send_all($MAGIC . pack('N', length $env) . $env);
# From the first read of stdin on, the call cannot be run again: any end is silence.
# (Before it, the resident reads an empty payload, which is silence too.)
$status = $DONE;
my $chunk;
while (sysread(STDIN, $chunk, 1 << 16)) {
    send_all($chunk);
}
shutdown($sock, 1);
my $reply = '';
while (sysread($sock, $chunk, 1 << 16)) {
    $reply .= $chunk;
}
# syswrite, not print: a failed flush at exit would make the status 1, and run.sh would
# run the hook again.
my $done = 0;
while ($done < length $reply) {
    my $wrote = syswrite(STDOUT, $reply, length($reply) - $done, $done);
    last unless $wrote;
    $done += $wrote;
}
exit $DONE;
