filedesc://arc-v2.arc 0.0.0.0 20000101000000 text/plain 200 - - 0 arc-v2.arc 121
2 0 Alexa Internet
URL IP-address Archive-date Content-type Result-code Checksum Location Offset Filename Archive-length

http://arc2.example/p?0 192.0.2.0 20000101000000 text/html 200 - - 0 arc-v2.arc 56
HTTP/1.0 200 OK
Content-Type: text/html

<p>hello</p>
http://arc2.example/p?1 192.0.2.1 20000101000001 text/html 200 - - 0 arc-v2.arc 56
HTTP/1.0 200 OK
Content-Type: text/html

<p>hello</p>
http://arc2.example/p?2 192.0.2.2 20000101000002 text/html 200 - - 0 arc-v2.arc 56
HTTP/1.0 200 OK
Content-Type: text/html

<p>hello</p>
