%% @doc The stanzas the `xmpp' kind sends, as Tsung's `ts_jabber' sends them (iodata): the
%% stream header, legacy and SASL authentication (PLAIN, ANONYMOUS, DIGEST-MD5's response),
%% presence, chat, roster, registration, MUC, pubsub and privacy lists. Pure; texts from the
%% scenario are escaped.
-module(beamscale_load_xmpp_stanza).

-export([header/1, iq/4, auth_get/1, auth_set/4, sasl/3, digest_md5/4, bind/1, session/0,
         presence/3, message/4, roster/3, register/2, muc/4, pubsub/4, privacy/2, escape/1,
         stamp/2, stamped/1]).

-define(SASL, "urn:ietf:params:xml:ns:xmpp-sasl").
-define(STAMP, "bs-stamp:").

%% @doc The stream header to `Domain'.
-spec header(binary()) -> iodata().
header(Domain) ->
    ["<?xml version='1.0'?><stream:stream to='", escape(Domain),
     "' xmlns='jabber:client' version='1.0' xmlns:stream='http://etherx.jabber.org/streams'>"].

%% @doc An iq of `Type' (get or set) with id `Id', to `To' (`none': the server), around `Inner'.
-spec iq(binary(), binary(), binary() | none, iodata()) -> iodata().
iq(Type, Id, none, Inner) -> ["<iq type='", Type, "' id='", Id, "'>", Inner, "</iq>"];
iq(Type, Id, To, Inner) ->
    ["<iq type='", Type, "' id='", Id, "' to='", escape(To), "'>", Inner, "</iq>"].

%% @doc Legacy authentication (XEP-0078): the fields asked for.
-spec auth_get(binary()) -> iodata().
auth_get(User) -> ["<query xmlns='jabber:iq:auth'><username>", escape(User), "</username></query>"].

%% @doc Legacy authentication: `plain' with the password, `digest' with SHA-1 of the stream id
%% and the password, `sip' with the server's nonce as Tsung sends it.
-spec auth_set(plain | digest | sip, binary(), binary(), binary()) -> iodata().
auth_set(How, User, Pass, Sid) ->
    Proof = case How of
                plain -> ["<password>", escape(Pass), "</password>"];
                digest -> ["<digest>", hex(crypto:hash(sha, [Sid, Pass])), "</digest>"];
                sip -> ["<sip_digest>", hex(crypto:hash(md5, [User, ":", Sid, ":", Pass])),
                        "</sip_digest>"]
            end,
    ["<query xmlns='jabber:iq:auth'><username>", escape(User),
     "</username><resource>tsung</resource>", Proof, "</query>"].

%% @doc A SASL `<auth>': PLAIN (authzid empty), ANONYMOUS, or DIGEST-MD5 (its challenge next).
-spec sasl(plain | anonymous | digest_md5, binary(), binary()) -> iodata().
sasl(plain, User, Pass) ->
    ["<auth xmlns='" ?SASL "' mechanism='PLAIN'>",
     base64:encode(<<0, User/binary, 0, Pass/binary>>), "</auth>"];
sasl(anonymous, _User, _Pass) -> "<auth xmlns='" ?SASL "' mechanism='ANONYMOUS'/>";
sasl(digest_md5, _User, _Pass) -> "<auth xmlns='" ?SASL "' mechanism='DIGEST-MD5'/>".

%% @doc The `<response>' to a DIGEST-MD5 challenge (RFC 2831; base64 text of the
%% `<challenge>'); the second challenge (rspauth) is answered empty.
-spec digest_md5(binary(), binary(), binary(), binary()) -> iodata().
digest_md5(Challenge, User, Pass, Domain) ->
    Fields = fields(base64:decode(Challenge)),
    case Fields of
        #{<<"rspauth">> := _} -> "<response xmlns='" ?SASL "'/>";
        _ ->
            Nonce = maps:get(<<"nonce">>, Fields, <<>>),
            Realm = maps:get(<<"realm">>, Fields, Domain),
            Cnonce = hex(crypto:strong_rand_bytes(8)),
            Uri = <<"xmpp/", Domain/binary>>,
            A1 = [crypto:hash(md5, [User, ":", Realm, ":", Pass]), ":", Nonce, ":", Cnonce],
            Resp = hex(crypto:hash(md5, [hex(crypto:hash(md5, A1)), ":", Nonce, ":00000001:",
                                         Cnonce, ":auth:",
                                         hex(crypto:hash(md5, ["AUTHENTICATE:", Uri]))])),
            Text = iolist_to_binary(
                     ["username=\"", User, "\",realm=\"", Realm, "\",nonce=\"", Nonce,
                      "\",cnonce=\"", Cnonce, "\",nc=00000001,qop=auth,digest-uri=\"", Uri,
                      "\",response=", Resp, ",charset=utf-8"]),
            ["<response xmlns='" ?SASL "'>", base64:encode(Text), "</response>"]
    end.

fields(Text) ->
    maps:from_list([{K, string:trim(V, both, "\"")}
                    || F <- binary:split(Text, <<",">>, [global]),
                       [K, V] <- [binary:split(F, <<"=">>)]]).

hex(Bin) -> string:lowercase(binary:encode_hex(Bin)).

%% @doc Resource binding's child.
-spec bind(binary()) -> iodata().
bind(Resource) ->
    ["<bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>", escape(Resource),
     "</resource></bind>"].

%% @doc The (legacy) session's child.
-spec session() -> iodata().
session() -> "<session xmlns='urn:ietf:params:xml:ns:xmpp-session'/>".

%% @doc A presence: `initial' or `broadcast' (available, with a status), `final' (unavailable),
%% `directed' (to `To'), `subscribe' (to `To').
-spec presence(atom(), binary() | none, binary()) -> iodata().
presence(initial, _To, _Show) -> "<presence/>";
presence(broadcast, _To, Show) -> ["<presence><show>", escape(Show), "</show></presence>"];
presence(final, _To, _Show) -> "<presence type='unavailable'/>";
presence(directed, To, Show) ->
    ["<presence to='", escape(To), "'><show>", escape(Show), "</show></presence>"];
presence(subscribe, To, _Show) -> ["<presence type='subscribe' to='", escape(To), "'/>"].

%% @doc A message of `Type' (chat, groupchat) to `To' whose body is `Body'.
-spec message(binary(), binary(), binary(), iodata()) -> iodata().
message(Type, Id, To, Body) ->
    ["<message id='", Id, "' to='", escape(To), "' type='", Type, "'><body>", Body,
     "</body></message>"].

%% @doc A body of `Size' bytes at least that starts with the send time (µs, system clock), read
%% by the receiver for the delivery time.
-spec stamp(non_neg_integer(), integer()) -> binary().
stamp(Size, Now) ->
    S = <<?STAMP, (integer_to_binary(Now))/binary, ";">>,
    <<S/binary, (binary:copy(<<"x">>, max(0, Size - byte_size(S))))/binary>>.

%% @doc The send time of a stamped body, or `none'.
-spec stamped(binary() | undefined) -> integer() | none.
stamped(<<?STAMP, Rest/binary>>) ->
    %% The `;' looked for in the first 21 bytes (a split compiled its pattern at each chat),
    %% first where a stamp of this era has it.
    case Rest of
        <<T:16/binary, $;, _/binary>> -> stamp_time(T);
        _ -> case semicolon(Rest, 0) of
                 none -> none;
                 N -> stamp_time(binary:part(Rest, 0, N))
             end
    end;
stamped(_) -> none.

stamp_time(T) ->
    try binary_to_integer(T) catch error:badarg -> none end.

semicolon(<<$;, _/binary>>, N) -> N;
semicolon(<<_, R/binary>>, N) when N < 20 -> semicolon(R, N + 1);
semicolon(_, _) -> none.

%% @doc A roster query child: `get', `{add, Jid}', `{remove, Jid}', `{rename, Jid, Name}'.
-spec roster(get | add | remove | rename, binary(), binary()) -> iodata().
roster(get, _Jid, _Name) -> "<query xmlns='jabber:iq:roster'/>";
roster(add, Jid, Name) ->
    ["<query xmlns='jabber:iq:roster'><item jid='", escape(Jid), "' name='", escape(Name),
     "'><group>Tsung Group</group></item></query>"];
roster(rename, Jid, Name) -> roster(add, Jid, Name);
roster(remove, Jid, _Name) ->
    ["<query xmlns='jabber:iq:roster'><item jid='", escape(Jid),
     "' subscription='remove'/></query>"].

%% @doc In-band registration's child (XEP-0077).
-spec register(binary(), binary()) -> iodata().
register(User, Pass) ->
    ["<query xmlns='jabber:iq:register'><username>", escape(User), "</username><password>",
     escape(Pass), "</password></query>"].

%% @doc A MUC presence: `join' (with the MUC namespace), `nick' (to a new nick), `exit'.
-spec muc(join | nick | exit, binary(), binary(), binary()) -> iodata().
muc(join, Room, Service, Nick) ->
    ["<presence to='", escape(Room), "@", escape(Service), "/", escape(Nick),
     "'><x xmlns='http://jabber.org/protocol/muc'/></presence>"];
muc(nick, Room, Service, Nick) ->
    ["<presence to='", escape(Room), "@", escape(Service), "/", escape(Nick), "'/>"];
muc(exit, Room, Service, Nick) ->
    ["<presence type='unavailable' to='", escape(Room), "@", escape(Service), "/",
     escape(Nick), "'/>"].

%% @doc A pubsub child (XEP-0060) for node `Node': create, delete (owner), subscribe,
%% unsubscribe (as `Jid'), publish (an item holding `Payload'); a create's `Payload' is the
%% node's type (Tsung's `node_type', none when empty) and configuration fields, or the fields.
-spec pubsub(create | delete | subscribe | unsubscribe | publish, binary(), binary(),
             binary() | [{binary(), binary()}] | {binary(), [{binary(), binary()}]}) ->
    iodata().
pubsub(create, Node, Jid, Config) when is_list(Config) ->
    pubsub(create, Node, Jid, {<<>>, Config});
pubsub(create, Node, _Jid, {Type, []}) ->
    ps("", ["<create node='", escape(Node), "'", type(Type), "/>"]);
pubsub(create, Node, _Jid, {Type, Config}) ->
    ps("", ["<create node='", escape(Node), "'", type(Type),
            "/><configure><x xmlns='jabber:x:data' "
            "type='submit'><field var='FORM_TYPE' type='hidden'><value>"
            "http://jabber.org/protocol/pubsub#node_config</value></field>",
            [["<field var='", escape(K), "'><value>", escape(V), "</value></field>"]
             || {K, V} <- Config], "</x></configure>"]);
pubsub(delete, Node, _Jid, _P) -> ps("#owner", ["<delete node='", escape(Node), "'/>"]);
pubsub(subscribe, Node, Jid, _P) ->
    ps("", ["<subscribe node='", escape(Node), "' jid='", escape(Jid), "'/>"]);
pubsub(unsubscribe, Node, Jid, _P) ->
    ps("", ["<unsubscribe node='", escape(Node), "' jid='", escape(Jid), "'/>"]);
pubsub(publish, Node, _Jid, Payload) ->
    ps("", ["<publish node='", escape(Node), "'><item><entry xmlns='beamscale'>", Payload,
            "</entry></item></publish>"]).

%% XEP-0060's `type' of a node created, as Tsung sends it; none for the server's default.
type(<<>>) -> "";
type(Type) -> [" type='", escape(Type), "'"].

ps(Ns, Inner) -> ["<pubsub xmlns='http://jabber.org/protocol/pubsub", Ns, "'>", Inner, "</pubsub>"].

%% @doc A privacy lists child (XEP-0016): `get_names' or `{set_active, Name}'.
-spec privacy(get_names | set_active, binary()) -> iodata().
privacy(get_names, _Name) -> "<query xmlns='jabber:iq:privacy'/>";
privacy(set_active, Name) ->
    ["<query xmlns='jabber:iq:privacy'><active name='", escape(Name), "'/></query>"].

%% @doc A text escaped for XML.
-spec escape(binary()) -> binary().
escape(T) ->
    %% Most texts (every chat's JID) need none: a scan of their bytes, cheaper than the five
    %% replaces (each compiles its pattern) that a text with a special character takes.
    case plain(T) of
        true -> T;
        false -> replace(T)
    end.

plain(<<C, _/binary>>) when C =:= $&; C =:= $<; C =:= $>; C =:= $'; C =:= $" -> false;
plain(<<_, R/binary>>) -> plain(R);
plain(<<>>) -> true.

replace(T) ->
    lists:foldl(fun({C, E}, Acc) -> binary:replace(Acc, C, E, [global]) end, T,
                [{<<"&">>, <<"&amp;">>}, {<<"<">>, <<"&lt;">>}, {<<">">>, <<"&gt;">>},
                 {<<"'">>, <<"&apos;">>}, {<<"\"">>, <<"&quot;">>}]).
