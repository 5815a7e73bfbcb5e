%% @doc The certificate authority of `beamscale record' (docs/record.md): made once (an EC P-256
%% key, a self-signed CA certificate valid 10 years) into `DIR/beamscale-record-ca.pem' and
%% `DIR/beamscale-record-ca.key' (mode 0600), read again by later recordings, and a certificate
%% per host the browser asks the proxy to tunnel to, signed by it. Another local user must not
%% choose the CA a browser is told to trust, nor where its key goes: a kept CA is taken only as
%% this user's regular files with a private key, in a directory no other user can write to
%% (a sticky one like /tmp does); new files are made with `exclusive' (O_EXCL: never through a
%% planted symlink, never over a file that appeared meanwhile). The certificates are built
%% from public_key's records (not its test helpers): subject, SAN, key usage, serverAuth.
-module(beamscale_record_ca).

-include_lib("public_key/include/public_key.hrl").
-include_lib("kernel/include/file.hrl").

-export([open/1, issue/2, pem_file/1, spki_sha256/1, trust_text/2, format_error/1]).
-export_type([ca/0]).

-opaque ca() :: #{cert := public_key:der_encoded(), key := #'ECPrivateKey'{},
                  leaf_key := #'ECPrivateKey'{}, pem := file:filename()}.

-define(PEM, "beamscale-record-ca.pem").
-define(KEY, "beamscale-record-ca.key").
-define(CA_DAYS, 3650).
%% Browsers refuse leaf certificates valid longer than 398 days.
-define(LEAF_DAYS, 365).

%% @doc The CA kept in `Dir', made there if it is not yet. Host certificates all carry one key,
%% made per proxy (a host's certificate is new each run: only the CA is trusted).
-spec open(file:filename()) -> {ok, ca()} | {error, {?MODULE, term()}}.
open(Dir) ->
    Pem = filename:join(Dir, ?PEM),
    Key = filename:join(Dir, ?KEY),
    Found = [{F, I} || F <- [Pem, Key], {ok, I} <- [file:read_link_info(F)]],
    case first_error([fun() -> dir_private(Dir) end
                      | [fun() -> own_regular(F, I) end || {F, I} <- Found]]) of
        ok when Found =:= [] -> make(Dir, Pem, Key);
        ok -> kept(Pem, Key, Found);
        Error -> Error
    end.

%% @doc A certificate for `Host' (a name or an IP address), signed by the CA: the chain to
%% serve (host first) and the key, as `ssl' takes them.
-spec issue(string(), ca()) -> {[public_key:der_encoded()], {'ECPrivateKey', binary()}}.
issue(Host, #{cert := CaDer, key := CaKey, leaf_key := Leaf}) ->
    #'OTPCertificate'{tbsCertificate = #'OTPTBSCertificate'{subject = Issuer}} =
        public_key:pkix_decode_cert(CaDer, otp),
    San = case inet:parse_address(Host) of
              {ok, Ip} -> {iPAddress, ip_bytes(Ip)};
              {error, _} -> {dNSName, Host}
          end,
    Exts = [ext(?'id-ce-basicConstraints', true, #'BasicConstraints'{cA = false}),
            ext(?'id-ce-keyUsage', true, [digitalSignature]),
            ext(?'id-ce-extKeyUsage', false, [?'id-kp-serverAuth']),
            ext(?'id-ce-subjectAltName', false, [San])],
    Der = sign(tbs(Issuer, name(Host), Leaf, ?LEAF_DAYS, Exts), CaKey),
    {[Der, CaDer], {'ECPrivateKey', public_key:der_encode('ECPrivateKey', Leaf)}}.

%% @doc The CA certificate's PEM file (for curl's `--cacert', certutil).
-spec pem_file(ca()) -> file:filename().
pem_file(#{pem := Pem}) -> Pem.

%% @doc The base64 SHA-256 of the CA's public key info: Chromium's
%% `--ignore-certificate-errors-spki-list' takes it.
-spec spki_sha256(ca()) -> string().
spki_sha256(#{cert := Der}) ->
    #'Certificate'{tbsCertificate = #'TBSCertificate'{subjectPublicKeyInfo = Spki}} =
        public_key:pkix_decode_cert(Der, plain),
    base64:encode_to_string(crypto:hash(sha256, public_key:der_encode('SubjectPublicKeyInfo',
                                                                       Spki))).

%% @doc How to make a browser or curl trust the CA, for the user of the proxy on `Port'.
-spec trust_text(ca(), inet:port_number()) -> iodata().
trust_text(Ca, Port) ->
    Pem = pem_file(Ca),
    ["HTTPS is recorded with certificates signed by the CA in ", Pem, "; trust it:\n"
     "  curl --cacert ", Pem, " --proxy http://127.0.0.1:", integer_to_list(Port),
     " https://...\n"
     "  certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n beamscale-record -i ", Pem,
     "   (Chromium, Firefox: NSS)\n"
     "  chromium --user-data-dir=DIR --ignore-certificate-errors-spki-list=",
     spki_sha256(Ca), "   (this CA only, no NSS)\n"].

%% @doc The reason, in words.
-spec format_error(term()) -> string().
format_error({read, File, Why}) -> lists:flatten([File, ": ", file:format_error(Why)]);
format_error({bad, File}) -> File ++ ": not a certificate or EC key made by beamscale record";
format_error({not_regular, File, Type}) ->
    lists:flatten(io_lib:format("~ts: a ~s, not a regular file: refused (planted?)", [File, Type]));
format_error({not_owner, File, Uid, Own}) ->
    lists:flatten(io_lib:format("~ts: owned by uid ~b, not by this user (uid ~b): refused, as a "
                                "CA another user made", [File, Uid, Own]));
format_error({key_readable, File, Mode}) ->
    lists:flatten(io_lib:format("~ts: mode ~.8b lets other users read the CA's key: refused "
                                "(chmod 600 it, or remove both files for a new CA)",
                                [File, Mode band 8#777]));
format_error({shared_dir, Dir, Mode}) ->
    lists:flatten(io_lib:format("~ts: mode ~.8b lets other users write there (and plant a CA "
                                "or a symlink): choose another --ca-dir", [Dir, Mode band 8#7777]));
format_error({exists, File}) ->
    File ++ ": appeared while the CA was being made: refused (planted?)";
format_error(Why) -> lists:flatten(io_lib:format("~0tp", [Why])).

%%% Internals

%% Both files there, this user's own regular files in a private directory: taken if the key
%% is private to this user too.
kept(Pem, Key, [{Pem, _}, {Key, KeyInfo}]) ->
    case {key_private(Key, KeyInfo), file:read_file(Pem), file:read_file(Key)} of
        {ok, {ok, P}, {ok, K}} -> read(Pem, P, K);
        {ok, {error, Why}, _} -> {error, {?MODULE, {read, Pem, Why}}};
        {ok, _, {error, Why}} -> {error, {?MODULE, {read, Key, Why}}};
        {Why, _, _} -> {error, {?MODULE, Why}}
    end;
kept(Pem, Key, [{Found, _}]) ->
    Missing = hd([Pem, Key] -- [Found]),
    {error, {?MODULE, {read, Missing, enoent}}}.

first_error([]) -> ok;
first_error([Check | Rest]) ->
    case Check() of
        ok -> first_error(Rest);
        Why -> {error, {?MODULE, Why}}
    end.

own_regular(File, #file_info{type = regular, uid = Uid}) ->
    case beamscale_peer:own_uid() of
        Uid -> ok;
        Own -> {not_owner, File, Uid, Own}
    end;
own_regular(File, #file_info{type = Type}) -> {not_regular, File, Type}.

key_private(_, #file_info{mode = Mode}) when Mode band 8#077 =:= 0 -> ok;
key_private(File, #file_info{mode = Mode}) -> {key_readable, File, Mode}.

%% Writable by group or others without the sticky bit: they could swap the files at will.
dir_private(Dir) ->
    case file:read_file_info(Dir) of
        {ok, #file_info{mode = Mode}} when Mode band 8#022 =/= 0, Mode band 8#1000 =:= 0 ->
            {shared_dir, Dir, Mode};
        {ok, _} -> ok;
        {error, enoent} -> ok;
        {error, Why} -> {read, Dir, Why}
    end.

read(Pem, P, K) ->
    case {public_key:pem_decode(P), public_key:pem_decode(K)} of
        {[{'Certificate', Cert, not_encrypted}], [{'ECPrivateKey', _, not_encrypted} = E]} ->
            {ok, #{cert => Cert, key => public_key:pem_entry_decode(E), pem => Pem,
                   leaf_key => key()}};
        _ -> {error, {?MODULE, {bad, Pem}}}
    end.

make(Dir, Pem, KeyFile) ->
    Key = key(),
    Name = name("beamscale record CA"),
    Exts = [ext(?'id-ce-basicConstraints', true, #'BasicConstraints'{cA = true}),
            ext(?'id-ce-keyUsage', true, [keyCertSign, cRLSign])],
    Der = sign(tbs(Name, Name, Key, ?CA_DAYS, Exts), Key),
    KeyPem = public_key:pem_encode([public_key:pem_entry_encode('ECPrivateKey', Key)]),
    CertPem = public_key:pem_encode([{'Certificate', Der, not_encrypted}]),
    ok = beamscale_format_file:written(filelib:ensure_path(Dir), Dir),
    case first_error([fun() -> create(KeyFile, KeyPem, 8#600) end,
                      fun() -> create(Pem, CertPem, 8#644) end]) of
        ok -> {ok, #{cert => Der, key => Key, pem => Pem, leaf_key => key()}};
        Error -> Error
    end.

%% A new file, made by this call (O_EXCL), with its mode before anything is in it.
create(File, Data, Mode) ->
    case file:open(File, [write, exclusive, raw, binary]) of
        {ok, Fd} ->
            ok = beamscale_format_file:written(file:change_mode(File, Mode), File),
            ok = beamscale_format_file:written(file:write(Fd, Data), File),
            ok = file:close(Fd);
        {error, eexist} -> {exists, File};
        {error, Why} -> {read, File, Why}
    end.

key() -> public_key:generate_key({namedCurve, ?secp256r1}).

tbs(Issuer, Subject, #'ECPrivateKey'{parameters = Curve, publicKey = Pub}, Days, Exts) ->
    Now = erlang:system_time(second),
    #'OTPTBSCertificate'{
       version = v3,
       %% Positive, 63 bits of randomness: a browser that saw another certificate of a host
       %% (an earlier run's) does not take the two for one.
       serialNumber = rand:uniform(1 bsl 63),
       signature = #'SignatureAlgorithm'{algorithm = ?'ecdsa-with-SHA256',
                                         parameters = asn1_NOVALUE},
       issuer = Issuer,
       validity = #'Validity'{notBefore = time(Now - 86400), notAfter = time(Now + Days * 86400)},
       subject = Subject,
       subjectPublicKeyInfo =
           #'OTPSubjectPublicKeyInfo'{
              algorithm = #'PublicKeyAlgorithm'{algorithm = ?'id-ecPublicKey', parameters = Curve},
              subjectPublicKey = #'ECPoint'{point = Pub}},
       extensions = Exts}.

sign(Tbs, Key) -> public_key:pkix_sign(Tbs, Key).

ext(Id, Critical, Value) -> #'Extension'{extnID = Id, critical = Critical, extnValue = Value}.

name(Cn) ->
    {rdnSequence, [[attr(?'id-at-commonName', Cn)],
                   [attr(?'id-at-organizationName', "beamscale record")]]}.

attr(Type, Text) ->
    #'AttributeTypeAndValue'{type = Type, value = {utf8String, unicode:characters_to_binary(Text)}}.

%% X.509 times: UTCTime up to 2049, GeneralizedTime after.
time(Seconds) ->
    {{Y, Mo, D}, {H, Mi, S}} = calendar:system_time_to_universal_time(Seconds, second),
    Text = lists:flatten(io_lib:format("~2..0b~2..0b~2..0b~2..0b~2..0bZ", [Mo, D, H, Mi, S])),
    case Y < 2050 of
        true -> {utcTime, lists:flatten(io_lib:format("~2..0b", [Y rem 100])) ++ Text};
        false -> {generalTime, integer_to_list(Y) ++ Text}
    end.

ip_bytes({A, B, C, D}) -> <<A, B, C, D>>;
ip_bytes(Ip) -> << <<W:16>> || W <- tuple_to_list(Ip) >>.
