# Hands one hook call to metacog's resident process (metacog/resident.py) and prints
# its reply. Usage: perl client.pl <the resident folder>, the payload on stdin.
#
# Core Perl and no modules: `use Socket` alone costs 12 ms, four times this whole script
# (a Python start costs 12 ms bare, about 20 inside Claude Code). Exit 3 means nobody
# answered and stdin is untouched: hooks/run.sh then runs the hook itself. Any later
# failure ends in silence, like the hook's own failures.
use strict;
chdir $ARGV[0] or exit 3;  # then a relative address: socket paths are limited to ~104 bytes
socket(my $sock, 1, 1, 0) or exit 3;  # AF_UNIX, SOCK_STREAM: 1 and 1 on Linux and macOS
my $name = 'hook.sock';
my $address = $^O eq 'linux' ? pack('S', 1) . $name : pack('CC', 2 + length $name, 1) . $name;
connect($sock, $address) or exit 3;
$SIG{PIPE} = 'IGNORE';
$SIG{ALRM} = sub { exit 0 };  # the resident process's watchdog ends a stuck call at 8 s
alarm 9;
binmode $_ for $sock, \*STDIN, \*STDOUT;

sub send_all {
    my ($data) = @_;
    my ($done, $size) = (0, length $data);
    while ($done < $size) {
        my $wrote = syswrite($sock, $data, $size - $done, $done);
        exit 0 unless defined $wrote;
        $done += $wrote;
    }
}

# The environment travels with the call: it decides where metacog keeps its files.
delete $ENV{PERL_BADLANG};  # run.sh's, for this script alone
my $env = join '', map { "$_=$ENV{$_}\0" } keys %ENV;
send_all('metacog1' . pack('N', length $env) . $env);
my $chunk;
while (my $got = sysread(STDIN, $chunk, 1 << 16)) {
    send_all($chunk);
}
shutdown($sock, 1);
my $reply = '';
while (my $got = sysread($sock, $chunk, 1 << 16)) {
    $reply .= $chunk;
}
print $reply;
exit 0;
