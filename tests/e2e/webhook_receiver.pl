#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# An Alertmanager webhook receiver for the end-to-end tests: listens on a
# free loopback port (written to PORTFILE once listening), and appends the
# JSON body of every POST it receives to OUTFILE, one notification per line,
# answering 200. Runs until killed.
#
#   webhook_receiver.pl OUTFILE PORTFILE
use strict;
use warnings;
use IO::Socket::INET;
use IO::Handle;

my ($out, $portfile) = @ARGV;
die "usage: $0 OUTFILE PORTFILE\n" unless defined $portfile;
my $srv = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp',
                                Listen => 8, ReuseAddr => 1)
    or die "webhook_receiver: cannot listen on 127.0.0.1: $!\n";
open(my $log, '>>', $out) or die "webhook_receiver: cannot open $out: $!\n";
$log->autoflush(1);
# The port file appears whole (renamed into place) and only once listening.
open(my $pf, '>', "$portfile.tmp") or die "webhook_receiver: cannot write $portfile.tmp: $!\n";
print $pf $srv->sockport(), "\n";
close($pf);
rename("$portfile.tmp", $portfile) or die "webhook_receiver: cannot rename to $portfile: $!\n";

while (my $c = $srv->accept()) {
    my ($len, $line) = (0, '');
    my $request = <$c>;
    while (defined($line = <$c>) && $line ne "\r\n" && $line ne "\n") {
        $len = $1 if $line =~ /^Content-Length:\s*(\d+)/i;
    }
    my $body = '';
    while (length($body) < $len) {
        my $n = read($c, $body, $len - length($body), length($body));
        last unless $n;
    }
    if (defined $request && $request =~ /^POST /) {
        $body =~ s/\n//g;
        print $log $body, "\n";
    }
    print $c "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    close($c);
}
