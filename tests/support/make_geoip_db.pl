#!/usr/bin/perl
#
# make_geoip_db.pl - writes a small MaxMind DB in the GeoIP2 City schema for
# the tests of the flags service's GeoIP properties.
#
#   perl tests/support/make_geoip_db.pl OUT.mmdb
#
# Needs MaxMind::DB::Writer (Debian: libmaxmind-db-writer-perl, installed by
# scripts/setup). The file is written next to OUT and renamed into place, so
# a reader never sees half a database.
#
# Only documentation ranges are used (RFC 5737 for IPv4, RFC 3849 for IPv6):
# the places are real, the address-to-place mapping is made up.
#
# RECORDS - unit and integration tests rely on these exact values; change
# them only together with those tests. "-" = the field is absent.
#
#   network          city     country      iso continent      code postal time_zone
#   203.0.113.0/24   Toronto  Canada       CA  North America  NA   M5V    America/Toronto
#   198.51.100.0/24  -        Brazil       BR  South America  SA   -      -
#   2001:db8::/32    Berlin   Germany      DE  Europe         EU   10115  Europe/Berlin
#   192.0.2.0/25     Zürich   Switzerland  CH  Europe         EU   8001   Europe/Zurich
#   192.0.2.128/25   (names in German only: city "Wien", country "Österreich",
#                     continent "Europa")  AT                 EU   -      Europe/Vienna
#
# So the $geoip_* properties a lookup yields are:
#   203.0.113.x      all seven (Toronto ...)
#   198.51.100.x     four: $geoip_country_name Brazil, $geoip_country_code BR,
#                    $geoip_continent_name South America, $geoip_continent_code SA
#   2001:db8::x      all seven (Berlin ...)
#   192.0.2.0-127    all seven; city and names are non-ASCII UTF-8 ("Zürich")
#   192.0.2.128-255  three: $geoip_country_code AT, $geoip_continent_code EU,
#                    $geoip_time_zone Europe/Vienna (no English names)
#   anything else    none (e.g. 10.0.0.1, 8.8.8.8, 2001:db9::1)
#
# IPv4 is also reachable through the usual IPv6 aliases (alias_ipv6_to_ipv4,
# as in MaxMind's own databases): ::ffff:203.0.113.7 finds Toronto.
# Records also carry fields the service ignores (other languages,
# subdivisions, coordinates) so the tree looks like a real City database.
#
use strict;
use warnings;
use utf8;

BEGIN {
    eval { require MaxMind::DB::Writer::Tree; 1 }
        or die "make_geoip_db.pl: MaxMind::DB::Writer is not installed "
        . "(Debian package libmaxmind-db-writer-perl; run scripts/setup)\n$@";
}

my $out = shift @ARGV or die "usage: $0 OUT.mmdb\n";

# Value types per map key, as the City schema has them.
my %TYPES = (
    city            => 'map',
    continent       => 'map',
    country         => 'map',
    location        => 'map',
    names           => 'map',
    postal          => 'map',
    subdivisions    => [ 'array', 'map' ],
    latitude        => 'double',
    longitude       => 'double',
    accuracy_radius => 'uint16',
);

sub key_type {
    my ($key) = @_;
    return $TYPES{$key} // 'utf8_string';
}

my %EUROPE = ( code => 'EU', names => { en => 'Europe', de => 'Europa', fr => 'Europe' } );

my @RECORDS = (
    [
        '203.0.113.0/24',
        {
            continent => { code => 'NA', names => { en => 'North America', fr => 'Amérique du Nord' } },
            country   => { iso_code => 'CA', names => { en => 'Canada', fr => 'Canada' } },
            city      => { names => { en => 'Toronto', fr => 'Toronto' } },
            subdivisions => [ { iso_code => 'ON', names => { en => 'Ontario' } } ],
            postal    => { code => 'M5V' },
            location  => {
                latitude => 43.6532, longitude => -79.3832,
                accuracy_radius => 20, time_zone => 'America/Toronto',
            },
        },
    ],
    [
        '198.51.100.0/24',
        {
            continent => { code => 'SA', names => { en => 'South America' } },
            country   => { iso_code => 'BR', names => { en => 'Brazil', de => 'Brasilien' } },
            location  => { latitude => -10.0, longitude => -55.0, accuracy_radius => 1000 },
        },
    ],
    [
        '2001:db8::/32',
        {
            continent => {%EUROPE},
            country   => { iso_code => 'DE', names => { en => 'Germany', de => 'Deutschland' } },
            city      => { names => { en => 'Berlin', de => 'Berlin' } },
            subdivisions => [ { iso_code => 'BE', names => { en => 'Land Berlin' } } ],
            postal    => { code => '10115' },
            location  => {
                latitude => 52.5200, longitude => 13.4050,
                accuracy_radius => 10, time_zone => 'Europe/Berlin',
            },
        },
    ],
    [
        '192.0.2.0/25',
        {
            continent => {%EUROPE},
            country   => { iso_code => 'CH', names => { en => 'Switzerland', de => 'Schweiz' } },
            city      => { names => { en => 'Zürich', de => 'Zürich' } },
            postal    => { code => '8001' },
            location  => {
                latitude => 47.3769, longitude => 8.5417,
                accuracy_radius => 5, time_zone => 'Europe/Zurich',
            },
        },
    ],
    [
        '192.0.2.128/25',
        {
            continent => { code => 'EU', names => { de => 'Europa' } },
            country   => { iso_code => 'AT', names => { de => 'Österreich' } },
            city      => { names => { de => 'Wien' } },
            location  => { time_zone => 'Europe/Vienna' },
        },
    ],
);

my $tree = MaxMind::DB::Writer::Tree->new(
    ip_version            => 6,
    record_size           => 24,
    database_type         => 'Test-GeoIP2-City',
    languages             => [ 'en', 'de', 'fr' ],
    description           => { en => 'Fictional City-schema test data on documentation ranges' },
    map_key_type_callback => \&key_type,
    alias_ipv6_to_ipv4    => 1,
    # Documentation ranges count as reserved and would be dropped silently.
    remove_reserved_networks => 0,
);

$tree->insert_network( $_->[0], $_->[1] ) for @RECORDS;

my $tmp = "$out.tmp.$$";
open my $fh, '>:raw', $tmp or die "make_geoip_db.pl: cannot write $tmp: $!\n";
$tree->write_tree($fh);
close $fh or die "make_geoip_db.pl: cannot write $tmp: $!\n";
rename $tmp, $out or die "make_geoip_db.pl: cannot rename $tmp to $out: $!\n";
